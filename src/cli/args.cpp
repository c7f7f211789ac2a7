#include "args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.h"
#include "table.h"

namespace tad_cli {

namespace {

struct OptionSpec {
    const char *name;
    const char *alias;  // short form, or nullptr
    bool takes_value;
    const char *commands;  // the commands that take it, space-separated; "*": all
};

const OptionSpec kOptions[] = {
    {"--work-dir", nullptr, true, "*"},
    {"--python", nullptr, true, "*"},
    {"--device", nullptr, true, "*"},
    {"--timeout", nullptr, true, "*"},
    {"--worker-memory", nullptr, true, "*"},
    {"--quiet", "-q", false, "*"},
    {"--output", "-o", true, "generate export"},
    {"--explain", nullptr, false, "generate"},
    {"--dims", nullptr, true, "generate verify bench run export dataset optimize"},
    {"--launch", nullptr, true, "generate verify bench run export"},
    {"--loops", nullptr, true, "generate verify bench run dataset export optimize"},
    {"--dtypes", nullptr, true, "verify bench run dataset export"},
    {"--cpu", nullptr, false, "verify"},
    {"--cpu-only", nullptr, false, "run"},
    {"--seed", nullptr, true, "verify run"},
    {"--max-elements", nullptr, true, "verify run dataset"},
    {"--reps", nullptr, true, "bench run"},
    {"--json", nullptr, false, "verify bench snapshots retrieve dataset export optimize"},
    {"--topk", nullptr, true, "retrieve optimize"},
    {"--min-sim", nullptr, true, "retrieve"},
    {"--exclude", nullptr, true, "retrieve"},
    {"--dataset", nullptr, true, "retrieve dataset"},
    {"--cache", nullptr, true, "retrieve dataset"},
    {"--only", nullptr, true, "dataset"},
    {"--record", nullptr, false, "dataset"},
    {"--bench", nullptr, false, "dataset"},
    {"--provider", nullptr, true, "optimize"},
    {"--model", nullptr, true, "optimize"},
    {"--base-url", nullptr, true, "optimize"},
    {"--api-key-env", nullptr, true, "optimize"},
    {"--iterations", nullptr, true, "optimize"},
    {"--parallel", nullptr, true, "optimize"},
    {"--temperature", nullptr, true, "optimize"},
    {"--reasoning-effort", nullptr, true, "optimize"},
    {"--budget-seconds", nullptr, true, "optimize"},
    {"--max-tokens", nullptr, true, "optimize"},
    {"--max-cost", nullptr, true, "optimize"},
    {"--price-input", nullptr, true, "optimize"},
    {"--price-output", nullptr, true, "optimize"},
    {"--max-output-tokens", nullptr, true, "optimize"},
    {"--request-timeout", nullptr, true, "optimize"},
    {"--retries", nullptr, true, "optimize"},
    {"--report", nullptr, true, "optimize"},
};

struct CommandSpec {
    const char *name;
    const char *argument;  // the one positional argument's name, or nullptr for none
    const char *optional = nullptr;  // a second, optional one
};

const CommandSpec kCommands[] = {
    {"generate", "FILE"},   {"verify", "FILE"},
    {"bench", "FILE"},      {"run", "FILE"},
    {"optimize", "FILE"},   {"export", "FILE"},
    {"snapshots", nullptr}, {"rollback", "ID"},
    {"retrieve", "FILE"},   {"dataset", "SUBCOMMAND", "DIR"},
    {"help", nullptr},      {"version", nullptr},
};

const OptionSpec *find_option(const std::string &name) {
    for (const OptionSpec &o : kOptions)
        if (name == o.name || (o.alias && name == o.alias)) return &o;
    return nullptr;
}

const CommandSpec *find_command(const std::string &name) {
    for (const CommandSpec &c : kCommands)
        if (name == c.name) return &c;
    return nullptr;
}

bool takes(const OptionSpec &o, const std::string &command) {
    if (std::strcmp(o.commands, "*") == 0) return true;
    std::string list = std::string(" ") + o.commands + " ";
    return list.find(" " + command + " ") != std::string::npos;
}

void check_against_command(const Args &a) {
    const CommandSpec *c = find_command(a.command);
    if (!c) throw UsageError("unknown command '" + a.command + "'");
    for (const auto &[name, value] : a.options)
        if (!takes(*find_option(name), a.command)) throw UsageError("'" + a.command + "' does not take " + name);
    size_t want = c->argument ? 1 : 0;
    if (a.positional.size() < want) throw UsageError("'" + a.command + "' needs " + c->argument);
    size_t most = want + (c->optional ? 1 : 0);
    if (a.positional.size() > most) throw UsageError("unexpected argument '" + a.positional[most] + "'");
}

}  // namespace

std::string Args::value(const std::string &name) const {
    auto it = options.find(name);
    return it == options.end() ? "" : it->second;
}

long long Args::integer(const std::string &name, long long dflt, long long min, long long max) const {
    if (!has(name)) return dflt;
    const std::string text = value(name);
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || v < min || v > max)
        throw UsageError(name + ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                         ", got '" + text + "'");
    return v;
}

double Args::seconds(const std::string &name, double dflt) const {
    if (!has(name)) return dflt;
    const std::string text = value(name);
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v > 0) || !std::isfinite(v))
        throw UsageError(name + ": expected a positive number of seconds, got '" + text + "'");
    return v;
}

double Args::real(const std::string &name, double dflt, double min, double max) const {
    if (!has(name)) return dflt;
    const std::string text = value(name);
    char *end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v >= min && v <= max))
        throw UsageError(name + ": expected a number from " + fmt_number(min) + " to " + fmt_number(max) + ", got '" +
                         text + "'");
    return v;
}

Args parse_args(int argc, char **argv) {
    Args a;
    bool options_done = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (options_done || arg.size() < 2 || arg[0] != '-') {
            if (a.command.empty())
                a.command = arg;
            else
                a.positional.push_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "-h" || arg == "--help" || arg == "--version") {
            // Answer the question whatever else the line holds.
            a = Args{};
            a.command = arg == "--version" ? "version" : "help";
            return a;
        }
        size_t eq = arg.find('=');
        std::string name = arg.substr(0, eq);
        const OptionSpec *spec = find_option(name);
        if (!spec) throw UsageError("unknown option '" + name + "'");
        std::string value;
        if (spec->takes_value && eq != std::string::npos) {
            value = arg.substr(eq + 1);
        } else if (spec->takes_value) {
            if (++i == argc) throw UsageError(name + " needs a value");
            value = argv[i];
        } else if (eq != std::string::npos) {
            throw UsageError(name + " takes no value");
        }
        a.options[spec->name] = value;
    }
    if (a.command.empty()) throw UsageError("no command given");
    check_against_command(a);
    return a;
}

}  // namespace tad_cli
