#include "driver/module_interface.h"

#include <algorithm>

namespace tad::driver {

namespace {

bool is_public(const std::string &name) { return !name.empty() && name[0] != '_'; }

// "a, b=..., *args, c, **kwargs" (positional-only parameters end with ", /").
std::string parameters(const ast::Node &args) {
    std::vector<std::string> out;
    const ast::NodeList &posonly = args.list("posonlyargs"), &positional = args.list("args");
    const size_t defaults = args.list("defaults").size(), total = posonly.size() + positional.size();
    size_t k = 0;
    auto add_positional = [&](const ast::NodePtr &a) {
        out.push_back(a->str("arg") + (k++ >= total - defaults ? "=..." : ""));
    };
    for (const ast::NodePtr &a : posonly) add_positional(a);
    if (!posonly.empty()) out.push_back("/");
    for (const ast::NodePtr &a : positional) add_positional(a);
    const ast::NodePtr vararg = args.node("vararg");
    if (vararg)
        out.push_back("*" + vararg->str("arg"));
    else if (!args.list("kwonlyargs").empty())
        out.push_back("*");
    const ast::NodeList &kw = args.list("kwonlyargs"), &kw_defaults = args.list("kw_defaults");
    for (size_t i = 0; i < kw.size(); ++i) out.push_back(kw[i]->str("arg") + (kw_defaults[i] ? "=..." : ""));
    const ast::NodePtr kwarg = args.node("kwarg");
    if (kwarg) out.push_back("**" + kwarg->str("arg"));
    std::string text;
    for (const std::string &p : out) text += (text.empty() ? "" : ", ") + p;
    return text;
}

void assigned_names(const ast::NodePtr &target, std::vector<std::string> &out) {
    if (!target) return;
    if (target->is("Name") && is_public(target->str("id"))) out.push_back(target->str("id") + " =");
    if (target->is("Tuple") || target->is("List"))
        for (const ast::NodePtr &e : target->list("elts")) assigned_names(e, out);
}

std::string name_of(const std::string &line) {
    size_t b = line.find(' ');
    size_t e = line.find_first_of("( =", b + 1);
    return line.substr(b + 1, e - b - 1);
}

}  // namespace

std::vector<std::string> module_interface(const ast::File &module) {
    std::vector<std::string> out;
    for (const ast::NodePtr &s : module.module->list("body")) {
        if ((s->is("FunctionDef") || s->is("AsyncFunctionDef")) && is_public(s->str("name")))
            out.push_back("def " + s->str("name") + "(" + parameters(*s->node("args")) + ")");
        else if (s->is("ClassDef") && is_public(s->str("name")))
            out.push_back("class " + s->str("name"));
        else if (s->is("Assign"))
            for (const ast::NodePtr &t : s->list("targets")) assigned_names(t, out);
        else if (s->is("AnnAssign") && s->node("value"))
            assigned_names(s->node("target"), out);
    }
    std::vector<std::string> unique;
    for (const std::string &l : out)
        if (std::find(unique.begin(), unique.end(), l) == unique.end()) unique.push_back(l);
    return unique;
}

std::string interface_change(const std::vector<std::string> &baseline, const std::vector<std::string> &candidate) {
    for (const std::string &want : baseline) {
        if (std::find(candidate.begin(), candidate.end(), want) != candidate.end()) continue;
        for (const std::string &have : candidate)
            if (have.rfind("def ", 0) == 0 && want.rfind("def ", 0) == 0 && name_of(have) == name_of(want))
                return "it changes '" + want + "' to '" + have + "'";
        return "it no longer defines '" + want + "'";
    }
    return "";
}

}  // namespace tad::driver
