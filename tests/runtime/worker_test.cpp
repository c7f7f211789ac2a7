#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/python_dir.h"
#include "runtime/worker.h"
#include "support/fs.h"

using tad::Json;
using tad::JsonRef;
using tad::Worker;
using tad::WorkerOptions;

namespace {

// An interpreter with torch: Debian's by default, $TAD_TEST_PYTHON where torch lives elsewhere.
const std::string kTorchPython = [] {
    const char *env = std::getenv("TAD_TEST_PYTHON");
    return std::string(env && *env ? env : "/usr/bin/python3");
}();
const std::string kData = std::string(TAD_SOURCE_DIR) + "/tests/runtime/data";

bool torch_available() {
    static const bool ok = std::system((kTorchPython + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0;
    return ok;
}

#define REQUIRE_TORCH()                                      \
    if (!torch_available())                                  \
    GTEST_SKIP() << "[SKIP] " << kTorchPython                \
                 << " cannot import torch (Debian: apt-get " \
                    "install python3-torch)"

WorkerOptions torch_options(const std::string &mode) {
    WorkerOptions o;
    o.python = kTorchPython;
    o.mode = mode;
    return o;
}

Json trace_args(const std::string &file, const std::string &stub, const std::string &dims_json) {
    Json args = Json::object();
    args.set("file", kData + "/" + file);
    args.set("stub", stub);
    args.set_copy("dims", Json::parse(dims_json, "test dims"));
    return args;
}

// The error a request throws, or a failure naming the request.
template <typename Fn> tad::Error error_of(Fn fn) {
    try {
        fn();
    } catch (const tad::Error &e) {
        return e;
    }
    ADD_FAILURE() << "no error";
    return tad::Error(TAD_OK, "");
}

bool starts_with(const std::string &s, const std::string &prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

JsonRef arg_named(JsonRef launch, const std::string &name) {
    JsonRef args = launch.at("args");
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].at("name").str() == name) return args[i];
    ADD_FAILURE() << "no argument " << name;
    return JsonRef();
}

// One worker for the tests that leave it healthy: each start imports torch (seconds).
class CpuWorker : public ::testing::Test {
protected:
    static void SetUpTestSuite() { worker_ = std::make_unique<Worker>(torch_options("cpu")); }
    static void TearDownTestSuite() { worker_.reset(); }
    void SetUp() override { REQUIRE_TORCH(); }
    static std::unique_ptr<Worker> worker_;
};
std::unique_ptr<Worker> CpuWorker::worker_;

}  // namespace

TEST_F(CpuWorker, HelloReportsCpuModeAndTheStandIn) {
    worker_->start();
    JsonRef hello = worker_->hello();
    EXPECT_EQ(hello.at("mode").str(), "cpu");
    EXPECT_EQ(hello.at("triton").str(), "stand-in");
    EXPECT_TRUE(hello.at("device").is_null());
    EXPECT_FALSE(hello.at("torch").str().empty());
    EXPECT_TRUE(starts_with(hello.at("python").str(), "3."));
}

// Where torch imports the real triton before the worker picks a mode, cpu mode still runs the
// stand-in (the interpreter executes its launches only).
TEST(Worker, CpuModeSetsAsideATritonImportedBeforeIt) {
    REQUIRE_TORCH();
    WorkerOptions o = torch_options("cpu");
    o.env.emplace_back("PYTHONPATH", kData + "/preimported_triton");
    Worker w(o);
    w.start();
    EXPECT_EQ(w.hello().at("mode").str(), "cpu");
    EXPECT_EQ(w.hello().at("triton").str(), "stand-in");
}

TEST_F(CpuWorker, InfoDescribesTheFile) {
    Json args = Json::object();
    args.set("file", kData + "/scale_add.py");
    Json info = worker_->request("info", std::move(args));
    ASSERT_EQ(info.at("sweep").size(), 2u);
    EXPECT_EQ(info.at("sweep")[1].at("N").integer(), 4096);
    EXPECT_FALSE(info.at("sweep")[1].at("required").boolean());
    EXPECT_EQ(info.at("dtypes")[0].str(), "float32");
    EXPECT_TRUE(info.at("has_make_args").boolean());
    EXPECT_TRUE(info.at("has_reference").boolean());
    EXPECT_FALSE(info.at("has_flops").boolean());
}

TEST_F(CpuWorker, TraceRecordsLaunchesDespitePrints) {
    Json args = trace_args("scale_add.py", "scale_add", R"({"N": 300})");
    args.set_bool("with_data", true);
    std::vector<std::string> messages;
    Json rec = worker_->request("trace", std::move(args), [&](const std::string &m, double f) {
        messages.push_back(m);
        EXPECT_GE(f, 0.0);
        return true;
    });
    EXPECT_EQ(messages.size(), 3u);
    EXPECT_EQ(rec.at("stub").str(), "scale_add");
    EXPECT_EQ(rec.at("dims").at("dtype").str(), "float32");
    EXPECT_EQ(rec.at("inputs")[2].at("name").str(), "alpha");
    EXPECT_EQ(rec.at("inputs")[2].at("value").num(), 0.5);
    EXPECT_EQ(rec.at("outputs").size(), 2u);
    EXPECT_EQ(rec.at("temps")[0].at("shape")[0].integer(), 3);

    JsonRef first = rec.at("launches")[0];
    EXPECT_EQ(first.at("kernel").str(), "_scale_add_kernel");
    EXPECT_EQ(first.at("grid")[0].integer(), 3);
    EXPECT_EQ(first.at("grid")[2].integer(), 1);
    EXPECT_EQ(first.at("options").at("num_warps").integer(), 4);
    EXPECT_EQ(arg_named(first, "X").at("ref").at("input").integer(), 0);
    EXPECT_EQ(arg_named(first, "Out").at("ref").at("output").integer(), 0);
    EXPECT_EQ(arg_named(first, "Partial").at("ref").at("temp").integer(), 0);
    EXPECT_EQ(arg_named(first, "BLOCK").at("value").integer(), 128);
    EXPECT_EQ(arg_named(first, "n").at("kind").str(), "int");

    JsonRef second = rec.at("launches")[1];
    EXPECT_EQ(arg_named(second, "Partial").at("ref").at("temp").integer(), 0);
    EXPECT_EQ(arg_named(second, "Total").at("ref").at("output").integer(), 1);
    EXPECT_EQ(arg_named(second, "BLOCK").at("value").integer(), 4);  // next_power_of_2(3)

    // x = (arange(300) % 16) / 8 as float64 little endian: 0.0, then 0.125 = 0x3FC0000000000000, then
    // 0.25 = 0x3FD0000000000000, whose base64 starts as below.
    std::string x = rec.at("data").at("input:0").str();
    EXPECT_EQ(x.size(), 4 * ((300 * 8 + 2) / 3));
    EXPECT_EQ(x.substr(0, 24), "AAAAAAAAAAAAAAAAAADAPwAA");
}

TEST_F(CpuWorker, UserExceptionIsAnErrorReplyAndTheWorkerLivesOn) {
    tad::Error e =
        error_of([&] { worker_->request("trace", trace_args("misbehaving.py", "copy", R"({"case": "raise"})")); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_EQ(std::string(e.what()),
              "exception: make_args raised ValueError: bad dims (at " + kData + "/misbehaving.py:24)");
    try {
        worker_->request("trace", trace_args("misbehaving.py", "copy", R"({"case": "raise"})"));
        ADD_FAILURE() << "no error";
    } catch (const tad::WorkerError &w) {
        EXPECT_EQ(w.kind(), "exception");
        EXPECT_NE(w.traceback().find("in make_args"), std::string::npos);
    }
    EXPECT_TRUE(worker_->running());
}

// Failing user code: which part failed, and the innermost line of the user's file in the traceback
// (tests/runtime/data/user_errors.py).
std::string user_error(Worker &w, const std::string &dims) {
    try {
        w.request("trace", trace_args("user_errors.py", "copy", dims));
    } catch (const tad::WorkerError &e) {
        EXPECT_TRUE(w.running());
        return e.what();
    }
    ADD_FAILURE() << "no error for " << dims;
    return "";
}

const std::string kUserErrors = kData + "/user_errors.py";

TEST_F(CpuWorker, FailingMakeArgsSaysSoAndWhere) {
    EXPECT_EQ(user_error(*worker_, R"({"case": "raise"})"),
              "exception: make_args raised KeyError: 'missing' (at " + kUserErrors + ":38)");
}

TEST_F(CpuWorker, MakeArgsReturningSomethingElseIsDiagnosed) {
    const std::string advice =
        ", not (args, kwargs): return a tuple of the stub's positional arguments and a dict of its keyword "
        "arguments, e.g. ((x, w), {'eps': 1e-5}) (at " +
        kUserErrors + ":24)";
    EXPECT_EQ(user_error(*worker_, R"({"case": "none"})"), "exception: make_args returned NoneType" + advice);
    EXPECT_EQ(user_error(*worker_, R"({"case": "tensor"})"), "exception: make_args returned Tensor" + advice);
    EXPECT_EQ(user_error(*worker_, R"({"case": "too_many"})"),
              "exception: make_args returned arguments that stub 'copy' does not take: too many positional "
              "arguments (at " +
                  kUserErrors + ":14)");
}

TEST_F(CpuWorker, FailingStubSaysSoAndWhere) {
    EXPECT_EQ(user_error(*worker_, R"({"case": "ok", "n": 3})"),
              "exception: stub 'copy' raised RuntimeError: three is not allowed (at " + kUserErrors + ":17)");
}

TEST_F(CpuWorker, FailingLaunchSaysWhichKernelAndWhere) {
    EXPECT_EQ(user_error(*worker_, R"({"case": "ok", "n": 5})"),
              "launch: kernel '_copy_kernel': missing a required argument: 'n' (at " + kUserErrors + ":19)");
}

TEST_F(CpuWorker, StubLaunchingNothing) {
    tad::Error e = error_of([&] { worker_->request("trace", trace_args("misbehaving.py", "copy", "{}")); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_STREQ(e.what(), "no_launch: stub 'copy' launched no @triton.jit kernel");
}

TEST_F(CpuWorker, MissingStub) {
    tad::Error e = error_of([&] { worker_->request("trace", trace_args("misbehaving.py", "nope", "{}")); });
    EXPECT_EQ(std::string(e.what()), "no_stub: " + kData + "/misbehaving.py has no function 'nope'");
}

TEST_F(CpuWorker, VerifyNeedsTheGpu) {
    Json args = trace_args("scale_add.py", "scale_add", "{}");
    tad::Error e = error_of([&] { worker_->request("verify", std::move(args)); });
    EXPECT_EQ(e.status(), TAD_ERR_NO_GPU);
    EXPECT_STREQ(e.what(),
                 "no_gpu: verify on the GPU needs triton and CUDA; use the CPU "
                 "interpreter (--cpu)");
}

TEST_F(CpuWorker, HangIsKilledAndTheNextRequestRestarts) {
    tad::Error e = error_of(
        [&] { worker_->request("trace", trace_args("misbehaving.py", "copy", R"({"case": "hang"})"), {}, 1.5); });
    EXPECT_EQ(e.status(), TAD_ERR_TIMEOUT);
    EXPECT_STREQ(e.what(), "worker did not answer 'trace' within 1.5 s; killed");
    EXPECT_FALSE(worker_->running());
    Json rec = worker_->request("trace", trace_args("scale_add.py", "scale_add", R"({"N": 8})"));
    EXPECT_EQ(rec.at("launches").size(), 2u);
}

TEST_F(CpuWorker, CrashIsReportedWithStderr) {
    tad::Error e =
        error_of([&] { worker_->request("trace", trace_args("misbehaving.py", "copy", R"({"case": "crash"})")); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_TRUE(starts_with(e.what(), "worker exited (signal 9) during 'trace'; last stderr: ")) << e.what();
    EXPECT_NE(std::string(e.what()).find("about to crash"), std::string::npos);
    EXPECT_EQ(worker_->request("hello").at("mode").str(), "cpu");
}

TEST_F(CpuWorker, ProgressCanCancel) {
    tad::Error e = error_of([&] {
        worker_->request("trace", trace_args("scale_add.py", "scale_add", R"({"N": 8})"),
                         [](const std::string &, double) { return false; });
    });
    EXPECT_EQ(e.status(), TAD_ERR_CANCELLED);
    EXPECT_STREQ(e.what(), "'trace' was cancelled; worker killed");
    EXPECT_EQ(worker_->request("hello").at("triton").str(), "stand-in");
}

TEST(Worker, WithoutTorchReportsAnImportError) {
    REQUIRE_TORCH();
    WorkerOptions o = torch_options("cpu");
    o.env = {{"PYTHONPATH", kData + "/notorch"}};
    Worker w(o);
    tad::Error e = error_of([&] { w.start(); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_TRUE(starts_with(e.what(), "import: cannot import torch: torch is hidden")) << e.what();
    EXPECT_FALSE(w.running());
}

TEST(Worker, InterpreterOnPathWithoutTorch) {
    if (std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0)
        GTEST_SKIP() << "[SKIP] python3 on PATH has torch; this test wants one without";
    WorkerOptions o;
    o.python = "python3";
    o.mode = "cpu";
    Worker w(o);
    tad::Error e = error_of([&] { w.request("hello"); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_TRUE(starts_with(e.what(), "import: cannot import torch: ")) << e.what();
}

TEST(Worker, MissingInterpreter) {
    WorkerOptions o;
    o.python = "/nonexistent/python3";
    Worker w(o);
    tad::Error e = error_of([&] { w.start(); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_STREQ(e.what(), "cannot start '/nonexistent/python3': No such file or directory");
}

TEST(Worker, OwnLogIsRemoved) {
    std::string log;
    {
        Worker w(WorkerOptions{});
        log = w.log_path();
        EXPECT_EQ(access(log.c_str(), F_OK), 0);
    }
    EXPECT_NE(access(log.c_str(), F_OK), 0);
}

// The log is bounded: grown past its limit (at the start, or by a request), its contents move to
// "<log>.1" before the next request, and the log starts over.
TEST(Worker, LogPastItsLimitMovesAsideBeforeTheNextRequest) {
    REQUIRE_TORCH();
    tad::fs::TempDir dir;
    WorkerOptions o = torch_options("cpu");
    o.log_path = dir.path() + "/worker.log";
    o.log_limit_bytes = 4096;
    tad::fs::write_file_atomic(o.log_path, std::string(5000, 'o') + "\n");
    Worker w(o);
    w.start();
    EXPECT_EQ(tad::fs::read_file(o.log_path + ".1"), std::string(5000, 'o') + "\n");
    EXPECT_LT(tad::fs::read_file(o.log_path).size(), 4096u);
    EXPECT_THROW(w.request("trace", trace_args("misbehaving.py", "copy", R"({"case": "chatty"})")), tad::WorkerError);
    EXPECT_NE(tad::fs::read_file(o.log_path).find(std::string(9999, 'x')), std::string::npos);
    w.request("info", trace_args("misbehaving.py", "copy", "{}"));
    EXPECT_NE(tad::fs::read_file(o.log_path + ".1").find(std::string(9999, 'x')), std::string::npos);
    EXPECT_EQ(tad::fs::read_file(o.log_path).find('x'), std::string::npos);
}

TEST(GpuWorker, TracesAndVerifiesWithRealTriton) {
    REQUIRE_TORCH();
    Worker w(torch_options("gpu"));
    try {
        w.start();
    } catch (const tad::WorkerError &e) {
        if (e.kind() != "no_gpu" && e.kind() != "import") throw;
        GTEST_SKIP() << "[SKIP] no GPU worker: " << e.what();
    }
    EXPECT_EQ(w.hello().at("mode").str(), "gpu");
    EXPECT_NE(w.hello().at("triton").str(), "stand-in");
    EXPECT_FALSE(w.hello().at("device").str().empty());
    Json rec = w.request("trace", trace_args("scale_add.py", "scale_add", R"({"N": 300})"));
    EXPECT_EQ(rec.at("launches")[0].at("grid")[0].integer(), 3);
    Json args = trace_args("scale_add.py", "scale_add", "{}");
    args.remove("dims");
    args.set("generated", kData + "/scale_add_generated.py");
    args.set_copy("dims_list", Json::parse(R"([{"N": 300}])", "test"));
    args.set_copy("dtypes", Json::parse(R"(["float32"])", "test"));
    std::vector<std::string> messages;
    Json report = w.request("verify", std::move(args), [&](const std::string &m, double) {
        messages.push_back(m);
        return true;
    });
    EXPECT_EQ(report.at("results")[0].at("status").str(), "pass") << report.dump(true);
    EXPECT_EQ(messages, std::vector<std::string>{"verify 1/1: {'N': 300} float32"});
}

// A scripted stand-in for tad_worker.py (stdlib only) for the protocol's failure paths.
WorkerOptions scripted_options() {
    WorkerOptions o;
    o.python = "python3";
    o.mode = "gpu";
    o.device = 2;
    o.python_dir = kData + "/fake_worker";
    return o;
}

TEST(ScriptedWorker, StartsWithModeAndDevice) {
    Worker w(scripted_options());
    Json r = w.request("echo");
    EXPECT_EQ(r.at("cmd").str(), "echo");
    ASSERT_EQ(r.at("argv").size(), 4u);
    EXPECT_EQ(r.at("argv")[1].str(), "gpu");
    EXPECT_EQ(r.at("argv")[3].str(), "2");
}

TEST(ScriptedWorker, LineThatIsNotJsonKillsIt) {
    Worker w(scripted_options());
    tad::Error e = error_of([&] { w.request("garbage"); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_STREQ(e.what(),
                 "worker wrote a line that is not JSON during 'garbage': this is not "
                 "json; killed");
    EXPECT_FALSE(w.running());
    EXPECT_EQ(w.request("echo").at("cmd").str(), "echo");
}

TEST(ScriptedWorker, ReplyOutOfTurnKillsIt) {
    Worker w(scripted_options());
    tad::Error e = error_of([&] { w.request("wrong_id"); });
    EXPECT_EQ(e.status(), TAD_ERR_WORKER);
    EXPECT_TRUE(starts_with(e.what(), "worker answered out of turn during 'wrong_id'")) << e.what();
    EXPECT_FALSE(w.running());
}

TEST(ScriptedWorker, RestartRequestIsHonoured) {
    Worker w(scripted_options());
    w.start();
    try {
        w.request("poison");
        ADD_FAILURE() << "no error";
    } catch (const tad::WorkerError &e) {
        EXPECT_EQ(e.status(), TAD_ERR_WORKER);
        EXPECT_EQ(e.kind(), "launch");
        EXPECT_STREQ(e.what(), "launch: kernel 'k': illegal address");
    }
    EXPECT_FALSE(w.running());
    EXPECT_EQ(w.request("echo").at("cmd").str(), "echo");
    EXPECT_TRUE(w.running());
}

TEST(PythonDir, EnvironmentFirstThenTheSourceTree) {
    setenv("TAD_PYTHON_DIR", "/somewhere/python", 1);
    EXPECT_EQ(tad::python_dir(), "/somewhere/python");
    unsetenv("TAD_PYTHON_DIR");
    EXPECT_EQ(access((tad::python_dir() + "/tad_worker.py").c_str(), R_OK), 0);
}

TEST(PythonTests, TraceAndVerifyUnitTestsPass) {
    REQUIRE_TORCH();
    // test_interpret.py runs kernels on the interpreter of the build's libtad.
    ASSERT_NE(tad::library_path(), "");
    std::string cmd = "TAD_LIBRARY='" + tad::library_path() + "' " + kTorchPython + " -m unittest discover -s " +
                      TAD_SOURCE_DIR + "/tests/runtime -p 'test_*.py' 2>&1";
    FILE *pipe = popen(cmd.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    int status = pclose(pipe);
    EXPECT_EQ(status, 0) << output;
    EXPECT_NE(output.find("\nOK"), std::string::npos) << output;
}
