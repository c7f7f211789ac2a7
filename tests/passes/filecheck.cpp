#include "filecheck.h"

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace tad::testing {

namespace {

// Runs of spaces and tabs become one space; leading and trailing ones go.
std::string squeeze(const std::string &s) {
    std::string out;
    for (char c : s) {
        const bool blank = c == ' ' || c == '\t';
        if (blank && (out.empty() || out.back() == ' ')) continue;
        out += blank ? ' ' : c;
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

std::vector<std::string> split_lines(const std::string &text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::string escape_regex(const std::string &s) {
    static const std::string special = "\\^$.|?*+()[]{}";
    std::string out;
    for (char c : s) {
        if (special.find(c) != std::string::npos) out += '\\';
        out += c;
    }
    return out;
}

// Matches patterns against lines, binding the [[NAME:regex]] variables of successful matches.
class Matcher {
public:
    // Whether `line` matches the check; a malformed pattern or an unbound variable sets `error`.
    bool matches(const Check &c, const std::string &line, std::string *error) {
        std::vector<std::string> binds;
        const std::string re = regex_of(c.pattern, binds, error);
        if (!error->empty()) return false;
        std::smatch m;
        if (!std::regex_search(line, m, std::regex(re))) return false;
        for (size_t i = 0; i < binds.size(); ++i) vars_[binds[i]] = m[i + 1].str();
        return true;
    }

private:
    std::map<std::string, std::string> vars_;

    // The regex for `pattern`; `binds` gets the names it binds, in the order of their groups.
    std::string regex_of(const std::string &pattern, std::vector<std::string> &binds, std::string *error) const {
        std::string re;
        size_t i = 0;
        while (i < pattern.size()) {
            const bool raw = pattern.compare(i, 2, "{{") == 0, var = pattern.compare(i, 2, "[[") == 0;
            if (!raw && !var) {
                re += escape_regex(std::string(1, pattern[i++]));
                continue;
            }
            const size_t close = pattern.find(raw ? "}}" : "]]", i + 2);
            if (close == std::string::npos) {
                *error = std::string("unclosed ") + (raw ? "{{" : "[[");
                return "";
            }
            const std::string inner = pattern.substr(i + 2, close - i - 2);
            re += raw ? "(?:" + inner + ")" : variable(inner, binds, error);
            i = close + 2;
        }
        return re;
    }

    std::string variable(const std::string &inner, std::vector<std::string> &binds, std::string *error) const {
        const size_t colon = inner.find(':');
        if (colon != std::string::npos) {
            binds.push_back(inner.substr(0, colon));
            return "(" + inner.substr(colon + 1) + ")";
        }
        for (size_t k = 0; k < binds.size(); ++k)  // bound earlier in this pattern: a backreference
            if (binds[k] == inner) return "\\" + std::to_string(k + 1);
        auto it = vars_.find(inner);
        if (it == vars_.end()) {
            *error = "undefined variable [[" + inner + "]]";
            return "";
        }
        return escape_regex(it->second);
    }
};

const char *directive(Check::Kind k) {
    switch (k) {
    case Check::Match: return "CHECK";
    case Check::Next: return "CHECK-NEXT";
    case Check::Not: return "CHECK-NOT";
    }
    return "?";
}

std::string where(const Check &c) {
    return "line " + std::to_string(c.line) + ": " + directive(c.kind) + ": " + c.pattern;
}

// Runs the checks in order over the output lines.
class Run {
public:
    Run(const std::vector<Check> &checks, const std::string &output) : checks_(checks) {
        for (const std::string &l : split_lines(output)) lines_.push_back(squeeze(l));
    }

    std::string go() {
        for (const Check &c : checks_) {
            if (c.kind == Check::Not) {
                nots_.push_back(&c);
                continue;
            }
            const size_t at = c.kind == Check::Next ? next_line(c) : search(c);
            if (!problem_.empty()) return problem_;
            if (!absent(next_, at)) return problem_;
            next_ = at + 1;
            matched_any_ = true;
        }
        absent(next_, lines_.size());
        return problem_;
    }

private:
    const std::vector<Check> &checks_;
    std::vector<std::string> lines_;
    Matcher matcher_;
    std::vector<const Check *> nots_;  // CHECK-NOTs waiting for the next match
    size_t next_ = 0;  // the first line after the previous match
    bool matched_any_ = false;
    std::string problem_;

    bool matches(const Check &c, size_t i) {
        std::string error;
        const bool ok = matcher_.matches(c, lines_[i], &error);
        if (!error.empty()) problem_ = where(c) + ": " + error;
        return ok;
    }

    size_t search(const Check &c) {
        for (size_t i = next_; i < lines_.size() && problem_.empty(); ++i)
            if (matches(c, i)) return i;
        if (problem_.empty())
            problem_ = where(c) + ": not found in the output from line " + std::to_string(next_ + 1) + " on";
        return lines_.size();
    }

    size_t next_line(const Check &c) {
        if (!matched_any_) {
            problem_ = where(c) + ": no previous match";
        } else if (next_ >= lines_.size()) {
            problem_ = where(c) + ": the output ends after the previous match";
        } else if (!matches(c, next_) && problem_.empty()) {
            problem_ = where(c) + ": output line " + std::to_string(next_ + 1) + " is \"" + lines_[next_] + "\"";
        }
        return next_;
    }

    // Whether the pending CHECK-NOTs match no line in [from, to); clears them.
    bool absent(size_t from, size_t to) {
        for (const Check *c : nots_)
            for (size_t i = from; i < to && problem_.empty(); ++i)
                if (matches(*c, i) && problem_.empty())
                    problem_ = where(*c) + ": found at output line " + std::to_string(i + 1) + " \"" + lines_[i] + "\"";
        nots_.clear();
        return problem_.empty();
    }
};

}  // namespace

std::vector<Check> parse_checks(const std::string &file_text) {
    static const std::regex directive_re(R"(^\s*//\s*(CHECK|CHECK-NEXT|CHECK-NOT):(.*)$)");
    static const std::regex any_directive_re(R"(^\s*//\s*CHECK-[A-Z]+:.*$)");
    std::vector<Check> checks;
    const std::vector<std::string> lines = split_lines(file_text);
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (!std::regex_match(lines[i], m, directive_re)) {
            // A directive this FileCheck lacks (CHECK-SAME) would check nothing.
            if (std::regex_match(lines[i], any_directive_re))
                throw std::runtime_error("line " + std::to_string(i + 1) +
                                         ": unknown directive (CHECK, CHECK-NEXT, CHECK-NOT): " + lines[i]);
            continue;
        }
        const std::string d = m[1].str();
        const Check::Kind k = d == "CHECK" ? Check::Match : d == "CHECK-NEXT" ? Check::Next : Check::Not;
        checks.push_back({k, squeeze(m[2].str()), static_cast<int>(i + 1)});
    }
    return checks;
}

std::string run_checks(const std::vector<Check> &checks, const std::string &output) { return Run(checks, output).go(); }

}  // namespace tad::testing
