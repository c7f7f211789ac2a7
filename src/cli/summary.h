// What `tad verify`, `tad bench` and `tad run` print: one table row per (mode, dims, dtype) built
// from the reports' JSON (docs/reports.md), bench timings joined to the GPU verify rows, then the
// messages of the rows that failed.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace tad_cli {

class Summary {
public:
    void add_verify(const std::string &report_json);
    void add_bench(const std::string &report_json);
    void print(std::ostream &out) const;

private:
    struct Row {
        std::string mode, dims_key, dims, dtype, status, errors;
        std::string fwd = "-", bwd = "-", ref = "-", ratio = "-";
    };
    Row &row_for(const std::string &mode, const std::string &dims_key, const std::string &dims,
                 const std::string &dtype);

    std::vector<Row> rows_;
    std::vector<std::string> notes_;  // "verify gpu M=4 float16: <message>"
};

// One line per verify report: "[PASS] cpu: 3/4 passed, 1 skipped, max rel err 1.20e-07".
std::string verify_line(const std::string &report_json);

// One line per case of a verify report that did not pass or skip: "  M=64 N=100 float16: fail, x 2.0e-02,
// dot 1.0e-07: <message>" (the dataset commands print them under the entry's verify_line).
std::vector<std::string> failed_cases(const std::string &report_json);
// "[BENCH] NVIDIA H100: median bwd speedup vs reference 2.50x".
std::string bench_line(const std::string &report_json);

// `tad snapshots`: the snapshot list (docs/reports.md) as a table; "no snapshots" when empty.
void print_snapshots(const std::string &list_json, std::ostream &out);

}  // namespace tad_cli
