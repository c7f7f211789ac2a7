// The command line: `tad [options] COMMAND [ARGS] [options]`, options in any position.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tad_cli {

struct Args {
    std::string command;  // "help" for -h/--help, "version" for --version
    std::vector<std::string> positional;
    std::map<std::string, std::string> options;  // by long name, e.g. "--dims"; flags map to ""

    bool has(const std::string &name) const { return options.count(name) != 0; }
    std::string value(const std::string &name) const;  // "" when absent
    // Typed values; UsageError naming the option when the text is not a number in range.
    long long integer(const std::string &name, long long dflt, long long min, long long max) const;
    double seconds(const std::string &name, double dflt) const;
    double real(const std::string &name, double dflt, double min, double max) const;
};

// UsageError for an unknown command or option, an option the command does not take, a missing
// option value or the wrong number of arguments.
Args parse_args(int argc, char **argv);

}  // namespace tad_cli
