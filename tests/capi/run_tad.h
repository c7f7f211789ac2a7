// Runs the `tad` program the build made next to the library, as a user would: its exit code,
// stdout and stderr.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.h"

struct Outcome {
    int code;
    std::string out, err;
};

inline std::string quote(const std::string &s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline Outcome run_tad(const std::vector<std::string> &args) {
    TempDir tmp;
    std::string cmd = quote(std::string(TAD_BINARY_DIR) + "/tad");
    for (const std::string &a : args) cmd += " " + quote(a);
    cmd += " 2>" + quote(tmp.path() + "/err");
    Outcome r{-1, "", ""};
    FILE *p = popen(cmd.c_str(), "r");
    if (!p) {
        ADD_FAILURE() << "popen failed: " << cmd;
        return r;
    }
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    int status = pclose(p);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream err(tmp.path() + "/err");
    std::ostringstream text;
    text << err.rdbuf();
    r.err = text.str();
    return r;
}
