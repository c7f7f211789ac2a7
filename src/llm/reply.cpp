#include "llm/reply.h"

#include <cstdlib>
#include <vector>

#include "support/error.h"

namespace tad::llm {

namespace {

std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(pos, end - pos);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        out.push_back(line);
        pos = end + 1;
    }
    return out;
}

std::string rstrip(const std::string &s) {
    size_t e = s.find_last_not_of(" \t");
    return e == std::string::npos ? "" : s.substr(0, e + 1);
}

std::string lstrip(const std::string &s) {
    size_t b = s.find_first_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b);
}

bool starts_like_patch(const std::string &code) {
    return code.rfind("--- ", 0) == 0 || code.rfind("@@ ", 0) == 0 || code.rfind("diff ", 0) == 0;
}

struct Block {
    std::string lang, code;
};

[[noreturn]] void refuse(const std::string &why) { fail(TAD_ERR_SYNTAX, why); }

std::vector<Block> blocks_of(const std::vector<std::string> &lines, const std::string &finish) {
    std::vector<Block> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string open = lstrip(lines[i]);
        if (open.rfind("```", 0) != 0) continue;
        Block b{rstrip(open.substr(3)), ""};
        size_t j = i + 1;
        while (j < lines.size() && rstrip(lstrip(lines[j])) != "```") b.code += lines[j++] + "\n";
        if (j == lines.size())
            refuse("the reply's code block opened at line " + std::to_string(i + 1) + " is not closed" +
                   (finish == "length" || finish == "max_tokens" ? ", the reply was cut at its token limit" : ""));
        out.push_back(std::move(b));
        i = j;
    }
    return out;
}

Proposal::Form form_of(const Block &b) {
    if (b.lang == "diff" || b.lang == "patch") return Proposal::Form::Patch;
    if (b.lang.empty() && starts_like_patch(b.code)) return Proposal::Form::Patch;
    return Proposal::Form::Module;
}

// ---- patches ----

struct Hunk {
    size_t patch_line = 0;  // 1-based, of its @@ header
    long old_start = 0;  // from the header, 1-based
    std::vector<std::string> before;  // the context and removed lines, as the text must have them
    std::string ops;  // per line of the hunk: ' ' context, '-' removed, '+' added
    std::vector<std::string> added;  // the '+' lines in order
};

bool is_file_header(const std::string &l) {
    return l.rfind("--- ", 0) == 0 || l.rfind("+++ ", 0) == 0 || l.rfind("diff ", 0) == 0 || l.rfind("index ", 0) == 0;
}

// Adds the hunk line `l` to `h`; false when `l` cannot be one (the hunk has ended).
bool hunk_line(const std::string &l, Hunk &h) {
    const char op = l.empty() ? ' ' : l[0];
    const std::string rest = l.empty() ? "" : l.substr(1);
    switch (op) {
    case ' ':
    case '-': h.before.push_back(rest); break;
    case '+': h.added.push_back(rest); break;
    case '\\': return true;  // "\ No newline at end of file"
    default: return false;
    }
    h.ops += op;
    return true;
}

// A blank line ending a hunk is the gap before the next header, not a blank context line.
void drop_trailing_blanks(Hunk &h) {
    while (!h.ops.empty() && h.ops.back() == ' ' && h.before.back().empty()) {
        h.ops.pop_back();
        h.before.pop_back();
    }
}

// The hunk's new lines for the text's lines [at, at + before.size()): context lines as the text
// has them (the model's may differ in trailing white space), added lines as the hunk has them.
std::vector<std::string> replacement(const std::vector<std::string> &text, size_t at, const Hunk &h) {
    std::vector<std::string> out;
    size_t old = at, added = 0;
    for (char op : h.ops) {
        if (op == ' ') out.push_back(text[old]);
        if (op != '+') ++old;
        if (op == '+') out.push_back(h.added[added++]);
    }
    return out;
}

std::vector<Hunk> hunks_of(const std::vector<std::string> &lines) {
    std::vector<Hunk> out;
    for (size_t i = 0; i < lines.size();) {
        if (lines[i].rfind("@@", 0) != 0) {
            ++i;
            continue;
        }
        Hunk h;
        h.patch_line = i + 1;
        size_t minus = lines[i].find('-');
        h.old_start = minus == std::string::npos ? 0 : std::strtol(lines[i].c_str() + minus + 1, nullptr, 10);
        for (++i; i < lines.size() && lines[i].rfind("@@", 0) != 0 && !is_file_header(lines[i]); ++i)
            if (!hunk_line(lines[i], h)) break;
        drop_trailing_blanks(h);
        out.push_back(std::move(h));
    }
    return out;
}

bool matches_at(const std::vector<std::string> &text, size_t at, const std::vector<std::string> &want, bool loose) {
    if (at + want.size() > text.size()) return false;
    for (size_t k = 0; k < want.size(); ++k)
        if (loose ? rstrip(text[at + k]) != rstrip(want[k]) : text[at + k] != want[k]) return false;
    return true;
}

// Where `h` applies at or after `from`: the match nearest to the header's line, exact before loose.
long find_hunk(const std::vector<std::string> &text, const Hunk &h, size_t from) {
    if (h.before.empty()) return std::max<long>(static_cast<long>(from), std::max(0L, h.old_start));
    const long hint = std::max(0L, h.old_start - 1);
    for (bool loose : {false, true}) {
        long best = -1;
        for (size_t at = from; at + h.before.size() <= text.size(); ++at)
            if (matches_at(text, at, h.before, loose) &&
                (best < 0 || std::labs(long(at) - hint) < std::labs(best - hint)))
                best = static_cast<long>(at);
        if (best >= 0) return best;
    }
    return -1;
}

// The first line of the hunk's old side the text lacks, for the message.
std::string missing_line(const std::vector<std::string> &text, const Hunk &h) {
    for (const std::string &want : h.before) {
        bool found = false;
        for (const std::string &t : text) found = found || rstrip(t) == rstrip(want);
        if (!found) return "'" + want + "' is not in the module";
    }
    return "its lines are not in the module in this order";
}

}  // namespace

const char *form_name(Proposal::Form f) { return f == Proposal::Form::Patch ? "patch" : "module"; }

Proposal proposal_of(const std::string &reply, const std::string &finish) {
    const std::vector<Block> blocks = blocks_of(lines_of(reply), finish);
    const Block *patch = nullptr, *module = nullptr;
    for (const Block &b : blocks) {
        if (form_of(b) == Proposal::Form::Patch)
            patch = &b;
        else if (!module || b.code.size() > module->code.size())
            module = &b;
    }
    if (patch) return {Proposal::Form::Patch, patch->code};
    if (module) return {Proposal::Form::Module, module->code};
    const std::string body = lstrip(reply);
    if (starts_like_patch(body)) return {Proposal::Form::Patch, body};
    refuse("the reply holds no code block (expected a ```python module or a ```diff patch)");
}

std::string apply_patch(const std::string &text, const std::string &diff) {
    const std::vector<Hunk> hunks = hunks_of(lines_of(diff));
    if (hunks.empty()) refuse("the patch has no hunk");
    std::vector<std::string> lines = lines_of(text);
    size_t from = 0;
    for (size_t k = 0; k < hunks.size(); ++k) {
        const Hunk &h = hunks[k];
        const long at = find_hunk(lines, h, from);
        if (at < 0 || static_cast<size_t>(at) > lines.size())
            refuse("hunk " + std::to_string(k + 1) + " (line " + std::to_string(h.patch_line) +
                   " of the patch) does not apply: " + missing_line(lines, h));
        const std::vector<std::string> after = replacement(lines, static_cast<size_t>(at), h);
        lines.erase(lines.begin() + at, lines.begin() + at + static_cast<long>(h.before.size()));
        lines.insert(lines.begin() + at, after.begin(), after.end());
        from = static_cast<size_t>(at) + after.size();
    }
    std::string out;
    for (const std::string &l : lines) out += l + "\n";
    return out;
}

}  // namespace tad::llm
