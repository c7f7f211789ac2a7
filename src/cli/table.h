// A plain-text table: columns padded to their widest cell, so that the output lines up in a
// terminal and stays easy to cut with awk.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace tad_cli {

class Table {
public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    // Each cell on one line, at most 200 bytes (terminal.h).
    void add(std::vector<std::string> row);
    bool empty() const { return rows_.empty(); }
    void print(std::ostream &out) const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

// Number formats shared by every table.
std::string fmt_err(double v);  // 1.23e-07
std::string fmt_ms(double v);  // 0.123
std::string fmt_ratio(double v);  // 2.50x
std::string fmt_number(double v);  // 0.5, 1e-06
std::string fmt_sim(double v);  // 0.812

}  // namespace tad_cli
