#include "table.h"

#include <algorithm>
#include <cstdio>

#include "terminal.h"

namespace tad_cli {

void Table::add(std::vector<std::string> row) {
    for (std::string &cell : row) cell = printable(cell, 200);
    rows_.push_back(std::move(row));
}

void Table::print(std::ostream &out) const {
    std::vector<size_t> width(header_.size(), 0);
    auto measure = [&](const std::vector<std::string> &row) {
        for (size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    };
    measure(header_);
    for (const auto &r : rows_) measure(r);
    auto line = [&](const std::vector<std::string> &row) {
        std::string s;
        for (size_t c = 0; c < width.size(); ++c) {
            std::string cell = c < row.size() ? row[c] : "";
            s += cell;
            if (c + 1 < width.size()) s += std::string(width[c] - cell.size() + 2, ' ');
        }
        s.erase(s.find_last_not_of(' ') + 1);
        out << s << '\n';
    };
    line(header_);
    for (const auto &r : rows_) line(r);
}

namespace {
std::string printf_double(const char *format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}
}  // namespace

std::string fmt_err(double v) { return printf_double("%.2e", v); }
std::string fmt_ms(double v) { return printf_double("%.3f", v); }
std::string fmt_ratio(double v) { return printf_double("%.2fx", v); }
std::string fmt_number(double v) { return printf_double("%g", v); }
std::string fmt_sim(double v) { return printf_double("%.3f", v); }

}  // namespace tad_cli
