// plan::Plan <-> JSON. Each enum is spelled by one table used both ways.
#include "plan/json.h"

#include <algorithm>
#include <iterator>

#include "support/error.h"

namespace tad::plan {

namespace {

template <typename E, size_t N> const char *spell(const char *const (&names)[N], E e) {
    const auto i = static_cast<size_t>(e);
    if (i >= N) fail(TAD_ERR_INTERNAL, "plan: enum value out of range");
    return names[i];
}

template <typename E, size_t N> E parse_enum(const char *const (&names)[N], JsonRef j, const char *what) {
    const std::string s = j.str();
    auto it = std::find_if(std::begin(names), std::end(names), [&](const char *n) { return s == n; });
    if (it == std::end(names)) fail(TAD_ERR_INVALID_ARGUMENT, std::string("plan: unknown ") + what + " '" + s + "'");
    return static_cast<E>(it - std::begin(names));
}

// In the order of the enums of plan.h, ir.h and passes.
const char *const kTensorKinds[] = {"input", "output", "temp"};
const char *const kRoles[] = {"backward", "tape_sizing", "tangent"};
const char *const kArgKinds[] = {"scalar",    "tensor",    "saved",   "shadow",         "tape", "tape_stride",
                                 "tape_need", "grid_size", "partial", "partial_stride", "hits", "stash"};
const char *const kInits[] = {"absent",  "cotangent", "incoming", "accumulator", "zeros",
                              "covered", "partials",  "tangent",  "zero_tangent"};
const char *const kGuardOps[] = {"equal", "at_least", "any"};
const char *const kParamKinds[] = {"pointer", "int", "float"};
const char *const kWrites[] = {"stores", "atomics"};
const char *const kExprOps[] = {"const", "name",     "add",      "sub", "mul", "div",
                                "mod",   "floordiv", "floormod", "min", "max"};

// "input 0", "output 1", "temp 2".
std::string tensor(const TensorRef &t) {
    return std::string(spell(kTensorKinds, t.kind)) + " " + std::to_string(t.index);
}

TensorRef tensor(JsonRef j) {
    const std::string s = j.str();
    const size_t space = s.find(' ');
    if (space == std::string::npos || space + 1 == s.size() ||
        s.find_first_not_of("0123456789", space + 1) != std::string::npos)
        fail(TAD_ERR_INVALID_ARGUMENT, "plan: bad tensor '" + s + "'");
    TensorRef t;
    const char *const(&kinds)[3] = kTensorKinds;
    auto it = std::find(std::begin(kinds), std::end(kinds), s.substr(0, space));
    if (it == std::end(kinds)) fail(TAD_ERR_INVALID_ARGUMENT, "plan: bad tensor '" + s + "'");
    t.kind = static_cast<TensorRef::Kind>(it - std::begin(kinds));
    t.index = std::stoi(s.substr(space + 1));
    return t;
}

void push_strings(JsonRef arr, const std::vector<std::string> &v) {
    for (const std::string &s : v) arr.push(s);
}

std::vector<std::string> strings(JsonRef j) {
    std::vector<std::string> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(j[i].str());
    return out;
}

void put_ints(JsonRef arr, const std::vector<int> &v) {
    for (int i : v) arr.push(static_cast<int64_t>(i));
}

std::vector<int> ints(JsonRef j) {
    std::vector<int> out;
    for (size_t i = 0; i < j.size(); ++i) out.push_back(static_cast<int>(j[i].integer()));
    return out;
}

void put_key(JsonRef arr, const Key &k) {
    for (const auto &[name, value] : k) {
        JsonRef pair = arr.push_array();
        pair.push(name);
        pair.push(value);
    }
}

Key key(JsonRef j) {
    Key k;
    for (size_t i = 0; i < j.size(); ++i) k.emplace_back(j[i][0].str(), j[i][1].str());
    return k;
}

// A polynomial: [[coefficient, [symbol, ...]], ...].
void put_poly(JsonRef arr, const passes::Poly &p) {
    for (const auto &[names, c] : p.terms()) {
        JsonRef term = arr.push_array();
        term.push(c);
        push_strings(term.push_array(), names);
    }
}

passes::Poly poly(JsonRef j) {
    passes::Poly p;
    for (size_t i = 0; i < j.size(); ++i) {
        passes::Poly term = passes::Poly::constant(j[i][0].integer());
        for (const std::string &n : strings(j[i][1])) term = term * passes::Poly::symbol(n);
        p = p + term;
    }
    return p;
}

void put_guard(JsonRef o, const Guard &g) {
    o.set("op", spell(kGuardOps, g.op));
    put_poly(o.set_array("lhs"), g.lhs);
    put_poly(o.set_array("rhs"), g.rhs);
    JsonRef any = o.set_array("any");
    for (const std::vector<Guard> &conj : g.any) {
        JsonRef c = any.push_array();
        for (const Guard &x : conj) put_guard(c.push_object(), x);
    }
}

Guard guard(JsonRef j) {
    Guard g;
    g.op = parse_enum<Guard::Op>(kGuardOps, j.at("op"), "guard op");
    g.lhs = poly(j.at("lhs"));
    g.rhs = poly(j.at("rhs"));
    JsonRef any = j.at("any");
    for (size_t i = 0; i < any.size(); ++i) {
        g.any.emplace_back();
        for (size_t k = 0; k < any[i].size(); ++k) g.any.back().push_back(guard(any[i][k]));
    }
    return g;
}

// A host expression: a number, a name, or [op, operand, ...].
void push_expr(JsonRef arr, const passes::HostExpr &e) {
    if (e.op == passes::HostExpr::Const) return arr.push(e.value);
    if (e.op == passes::HostExpr::Name) return arr.push(e.name);
    JsonRef node = arr.push_array();
    node.push(spell(kExprOps, e.op));
    for (const passes::HostExpr &a : e.args) push_expr(node, a);
}

void put_expr(JsonRef parent, const std::string &key, const passes::HostExpr &e) {
    if (e.op == passes::HostExpr::Const) {
        parent.set(key, e.value);
        return;
    }
    if (e.op == passes::HostExpr::Name) {
        parent.set(key, e.name);
        return;
    }
    JsonRef node = parent.set_array(key);
    node.push(spell(kExprOps, e.op));
    for (const passes::HostExpr &a : e.args) push_expr(node, a);
}

passes::HostExpr expr(JsonRef j) {
    passes::HostExpr e;
    if (j.is_number()) {
        e.value = j.integer();
    } else if (j.is_string()) {
        e.op = passes::HostExpr::Name;
        e.name = j.str();
    } else {
        e.op = parse_enum<passes::HostExpr::Op>(kExprOps, j[0], "expression op");
        for (size_t i = 1; i < j.size(); ++i) e.args.push_back(expr(j[i]));
    }
    return e;
}

void put_coverage(JsonRef o, const passes::Coverage &c) {
    JsonRef digits = o.set_array("digits");
    for (const auto &[coeff, size] : c.digits) {
        JsonRef d = digits.push_array();
        put_poly(d.push_array(), coeff);
        put_poly(d.push_array(), size);
    }
    JsonRef guards = o.set_array("guards");
    for (const passes::Inequality &g : c.guards) {
        JsonRef d = guards.push_array();
        put_poly(d.push_array(), g.lhs);
        put_poly(d.push_array(), g.rhs);
    }
}

passes::Coverage coverage(JsonRef j) {
    passes::Coverage c;
    for (size_t i = 0; i < j.at("digits").size(); ++i)
        c.digits.emplace_back(poly(j.at("digits")[i][0]), poly(j.at("digits")[i][1]));
    for (size_t i = 0; i < j.at("guards").size(); ++i)
        c.guards.push_back({poly(j.at("guards")[i][0]), poly(j.at("guards")[i][1])});
    return c;
}

void put_alloc(JsonRef o, const Alloc &a) {
    o.set("tensor", tensor(a.tensor));
    o.set("init", spell(kInits, a.init));
    o.set("index", a.index);
    if (a.cover) put_coverage(o.set_object("cover"), *a.cover);
    if (a.run >= 0) o.set("run", a.run);
    o.set_bool("wide", a.wide);
    o.set_bool("written", a.written);
    o.set("launch", static_cast<int64_t>(a.launch));
    o.set("param", a.param);
}

Alloc alloc(JsonRef j) {
    Alloc a;
    a.tensor = tensor(j.at("tensor"));
    a.init = parse_enum<Init>(kInits, j.at("init"), "shadow init");
    a.index = static_cast<int>(j.at("index").integer());
    if (j.has("cover")) a.cover = coverage(j.at("cover"));
    if (j.has("run")) a.run = static_cast<int>(j.at("run").integer());
    a.wide = j.at("wide").boolean();
    a.written = j.at("written").boolean();
    a.launch = static_cast<size_t>(j.at("launch").integer());
    a.param = j.at("param").str();
    return a;
}

void put_arg(JsonRef o, const Arg &a) {
    o.set("kind", spell(kArgKinds, a.kind));
    o.set("name", a.name);
    o.set("tensor", tensor(a.tensor));
    o.set("before", static_cast<int64_t>(a.before));
    o.set("axis", a.axis);
}

Arg arg(JsonRef j) {
    Arg a;
    a.kind = parse_enum<Arg::Kind>(kArgKinds, j.at("kind"), "argument kind");
    a.name = j.at("name").str();
    a.tensor = tensor(j.at("tensor"));
    a.before = static_cast<size_t>(j.at("before").integer());
    a.axis = static_cast<int>(j.at("axis").integer());
    return a;
}

void put_run(JsonRef o, const Run &r) {
    o.set("kernel", r.kernel);
    JsonRef args = o.set_array("args");
    for (const Arg &a : r.args) put_arg(args.push_object(), a);
    put_ints(o.set_array("regrid_axes"), r.regrid_axes);
    JsonRef partials = o.set_array("partials");
    for (const TensorRef &t : r.partials) partials.push(tensor(t));
    JsonRef covers = o.set_array("partial_covers");  // per partial: {} or {"cover": ...}
    for (const std::optional<passes::Coverage> &c : r.partial_covers) {
        JsonRef e = covers.push_object();
        if (c) put_coverage(e.set_object("cover"), *c);
    }
    o.set("transposed_axis", r.transposed_axis);
    JsonRef trips = o.set_object("trips");
    put_expr(trips, "lo", r.trips.lo);
    put_expr(trips, "hi", r.trips.hi);
    put_expr(trips, "step", r.trips.step);
    trips.set("per", r.trips.per);
    JsonRef w = o.set_object("widening");
    w.set("name", r.widening.name);
    w.set("width", r.widening.width);
    w.set("most", r.widening.most);
    JsonRef tiles = w.set_array("tiles");
    for (const std::vector<std::string> &t : r.widening.tiles) push_strings(tiles.push_array(), t);
    JsonRef free = o.set_array("tiles");
    for (const passes::FreeTile &t : r.tiles) {
        JsonRef f = free.push_object();
        f.set("name", t.name);
        f.set("axis", t.axis);
        f.set("target", t.target);
    }
}

Run run(JsonRef j) {
    Run r;
    r.kernel = static_cast<int>(j.at("kernel").integer());
    for (size_t i = 0; i < j.at("args").size(); ++i) r.args.push_back(arg(j.at("args")[i]));
    r.regrid_axes = ints(j.at("regrid_axes"));
    for (size_t i = 0; i < j.at("partials").size(); ++i) r.partials.push_back(tensor(j.at("partials")[i]));
    for (size_t i = 0; j.has("partial_covers") && i < j.at("partial_covers").size(); ++i) {
        JsonRef c = j.at("partial_covers")[i];
        r.partial_covers.push_back(c.has("cover") ? std::optional<passes::Coverage>(coverage(c.at("cover")))
                                                  : std::nullopt);
    }
    r.transposed_axis = static_cast<int>(j.at("transposed_axis").integer());
    JsonRef trips = j.at("trips");
    r.trips.lo = expr(trips.at("lo"));
    r.trips.hi = expr(trips.at("hi"));
    r.trips.step = expr(trips.at("step"));
    r.trips.per = static_cast<int>(trips.at("per").integer());
    JsonRef w = j.at("widening");
    r.widening.name = w.at("name").str();
    r.widening.width = w.at("width").integer();
    r.widening.most = w.at("most").integer();
    for (size_t i = 0; i < w.at("tiles").size(); ++i) r.widening.tiles.push_back(strings(w.at("tiles")[i]));
    for (size_t i = 0; i < j.at("tiles").size(); ++i) {
        JsonRef f = j.at("tiles")[i];
        r.tiles.push_back({f.at("name").str(), static_cast<int>(f.at("axis").integer()), f.at("target").integer()});
    }
    return r;
}

void put_kernel(JsonRef o, const Kernel &k) {
    o.set("name", k.fn.name);
    o.set("role", spell(kRoles, k.role));
    o.set("forward", k.forward);
    put_key(o.set_array("key"), k.key);
    JsonRef writes = o.set_object("writes");
    for (const auto &[param, w] : k.writes) writes.set(param, spell(kWrites, w.kind));
    o.set("sized", k.sized);
    if (k.regrid) {
        JsonRef g = o.set_object("regrid");
        put_ints(g.set_array("axes"), k.regrid->axes);
        push_strings(g.set_array("grid_params"), k.regrid->grid_params);
        put_key(g.set_array("partial"), k.regrid->partial);
        push_strings(g.set_array("accumulated"), k.regrid->accumulated);
    }
    o.set("transposed_axis", k.transposed_axis);
    JsonRef params = o.set_array("params");
    for (const ir::Param &p : k.fn.params) {
        JsonRef q = params.push_object();
        q.set("name", p.name);
        q.set("kind", spell(kParamKinds, p.kind));
    }
    JsonRef constexprs = o.set_array("constexprs");
    for (const ir::Constexpr &c : k.fn.constexprs) {
        JsonRef q = constexprs.push_object();
        q.set("name", c.name);
        q.set("literal", c.literal);
    }
}

Kernel kernel(JsonRef j) {
    Kernel k;
    k.fn.name = j.at("name").str();
    k.role = parse_enum<Kernel::Role>(kRoles, j.at("role"), "kernel role");
    k.forward = j.at("forward").str();
    k.key = key(j.at("key"));
    for (const std::string &param : j.at("writes").keys()) {
        passes::GradWrite w;
        w.kind = parse_enum<passes::GradWrite::Kind>(kWrites, j.at("writes").at(param), "write");
        k.writes[param] = w;
    }
    k.sized = j.at("sized").str();
    if (j.has("regrid")) {
        JsonRef g = j.at("regrid");
        // The covers travel with the runs (Run::partial_covers), which the executors read.
        k.regrid = Regrid{
            ints(g.at("axes")), strings(g.at("grid_params")), key(g.at("partial")), {}, strings(g.at("accumulated"))};
    }
    k.transposed_axis = static_cast<int>(j.at("transposed_axis").integer());
    for (size_t i = 0; i < j.at("params").size(); ++i) {
        JsonRef q = j.at("params")[i];
        ir::Param param;
        param.name = q.at("name").str();
        param.kind = parse_enum<ir::ParamKind>(kParamKinds, q.at("kind"), "parameter kind");
        k.fn.params.push_back(param);
    }
    for (size_t i = 0; i < j.at("constexprs").size(); ++i)
        k.fn.constexprs.push_back({j.at("constexprs")[i].at("name").str(), j.at("constexprs")[i].at("literal").str()});
    return k;
}

void put_branch(JsonRef o, const Branch &b) {
    JsonRef guards = o.set_array("guards");
    for (const Guard &g : b.guards) put_guard(guards.push_object(), g);
    if (b.remap) {
        JsonRef coords = o.set_array("remap");
        for (const passes::HostExpr &c : b.remap->coords) push_expr(coords, c);
        if (b.remap->tiles) {
            JsonRef t = o.set_object("remap_tiles");
            t.set("axis", static_cast<int64_t>(b.remap->tiles->axis));
            put_expr(t, "lo", b.remap->tiles->lo);
            put_expr(t, "hi", b.remap->tiles->hi);
            put_expr(t, "step", b.remap->tiles->step);
        }
    }
    if (b.sizing) put_run(o.set_object("sizing"), *b.sizing);
    if (!b.stashes.empty()) {
        JsonRef stashes = o.set_array("stashes");
        for (const StashBuffer &s : b.stashes) {
            JsonRef x = stashes.push_object();
            x.set("param", s.param);
            push_strings(x.set_array("dims"), s.dims);
            if (s.like) x.set("like", tensor(*s.like));
        }
    }
    JsonRef allocs = o.set_array("allocs");
    for (const Alloc &a : b.allocs) put_alloc(allocs.push_object(), a);
    JsonRef runs = o.set_array("runs");
    for (const Run &r : b.runs) put_run(runs.push_object(), r);
}

Branch branch(JsonRef j) {
    Branch b;
    for (size_t i = 0; i < j.at("guards").size(); ++i) b.guards.push_back(guard(j.at("guards")[i]));
    if (j.has("remap")) {
        b.remap.emplace();
        for (size_t i = 0; i < j.at("remap").size(); ++i) b.remap->coords.push_back(expr(j.at("remap")[i]));
        if (j.has("remap_tiles")) {
            JsonRef t = j.at("remap_tiles");
            b.remap->tiles = passes::PersistentTiles{static_cast<int>(t.at("axis").integer()), expr(t.at("lo")),
                                                     expr(t.at("hi")), expr(t.at("step"))};
        }
    }
    if (j.has("sizing")) b.sizing = run(j.at("sizing"));
    if (j.has("stashes"))
        for (size_t i = 0; i < j.at("stashes").size(); ++i) {
            JsonRef x = j.at("stashes")[i];
            b.stashes.push_back({x.at("param").str(), strings(x.at("dims")), std::nullopt});
            if (x.has("like")) b.stashes.back().like = tensor(x.at("like"));
        }
    for (size_t i = 0; i < j.at("allocs").size(); ++i) b.allocs.push_back(alloc(j.at("allocs")[i]));
    for (size_t i = 0; i < j.at("runs").size(); ++i) b.runs.push_back(run(j.at("runs")[i]));
    return b;
}

void put_step(JsonRef o, const Step &s) {
    o.set("launch", static_cast<int64_t>(s.launch));
    o.set("kernel", s.kernel);
    JsonRef cases = o.set_array("cases");
    for (const Case &c : s.cases) {
        JsonRef co = cases.push_object();
        put_key(co.set_array("key"), c.key);
        JsonRef branches = co.set_array("branches");
        for (const Branch &b : c.branches) put_branch(branches.push_object(), b);
        JsonRef pres = co.set_array("preconditions");
        for (const Precondition &p : c.preconditions) {
            JsonRef po = pres.push_object();
            JsonRef guards = po.set_array("guards");
            for (const Guard &g : p.guards) put_guard(guards.push_object(), g);
            po.set_bool("mapped", p.mapped);
            po.set("refusal", p.refusal);
        }
    }
}

Step step(JsonRef j) {
    Step s;
    s.launch = static_cast<size_t>(j.at("launch").integer());
    s.kernel = j.at("kernel").str();
    JsonRef cases = j.at("cases");
    for (size_t i = 0; i < cases.size(); ++i) {
        Case c;
        c.key = key(cases[i].at("key"));
        for (size_t k = 0; k < cases[i].at("branches").size(); ++k)
            c.branches.push_back(branch(cases[i].at("branches")[k]));
        JsonRef pres = cases[i].at("preconditions");
        for (size_t k = 0; k < pres.size(); ++k) {
            Precondition p;
            for (size_t g = 0; g < pres[k].at("guards").size(); ++g) p.guards.push_back(guard(pres[k].at("guards")[g]));
            p.mapped = pres[k].at("mapped").boolean();
            p.refusal = pres[k].at("refusal").str();
            c.preconditions.push_back(std::move(p));
        }
        s.cases.push_back(std::move(c));
    }
    return s;
}

void put_header(JsonRef o, const Plan &p) {
    o.set("mode", p.mode == Mode::Backward ? "backward" : "tangent");
    o.set("num_inputs", static_cast<int64_t>(p.num_inputs));
    o.set("num_outputs", static_cast<int64_t>(p.num_outputs));
    JsonRef grad = o.set_array("grad_inputs");
    for (int g : p.grad_inputs) grad.push(static_cast<int64_t>(g));
    push_strings(o.set_array("launched"), p.launched);
    JsonRef temps = o.set_array("temps");
    for (const auto &[launch, param] : p.temps) {
        JsonRef t = temps.push_array();
        t.push(static_cast<int64_t>(launch));
        t.push(param);
    }
    JsonRef aliases = o.set_array("aliases");
    for (const auto &[out, in] : p.aliases) {
        JsonRef a = aliases.push_array();
        a.push(static_cast<int64_t>(out));
        a.push(static_cast<int64_t>(in));
    }
}

void read_header(JsonRef j, Plan &p) {
    const std::string mode = j.at("mode").str();
    if (mode != "backward" && mode != "tangent") fail(TAD_ERR_INVALID_ARGUMENT, "plan: unknown mode '" + mode + "'");
    p.mode = mode == "backward" ? Mode::Backward : Mode::Tangent;
    p.num_inputs = static_cast<size_t>(j.at("num_inputs").integer());
    p.num_outputs = static_cast<size_t>(j.at("num_outputs").integer());
    for (size_t i = 0; i < j.at("grad_inputs").size(); ++i)
        p.grad_inputs.push_back(static_cast<int>(j.at("grad_inputs")[i].integer()));
    p.launched = strings(j.at("launched"));
    for (size_t i = 0; i < j.at("temps").size(); ++i)
        p.temps.emplace_back(static_cast<size_t>(j.at("temps")[i][0].integer()), j.at("temps")[i][1].str());
    for (size_t i = 0; i < j.at("aliases").size(); ++i)
        p.aliases[static_cast<int>(j.at("aliases")[i][0].integer())] =
            static_cast<int>(j.at("aliases")[i][1].integer());
}

// A Covered allocation's `run` (Alloc::run) names a run of its branch; none in the prologue.
void check_alloc_runs(const Plan &p) {
    for (const Alloc &a : p.prologue)
        if (a.run >= 0)
            fail(TAD_ERR_INVALID_ARGUMENT, "plan: a prologue allocation names run #" + std::to_string(a.run));
    for (const Step &s : p.steps)
        for (const Case &c : s.cases)
            for (const Branch &b : c.branches)
                for (const Alloc &a : b.allocs)
                    if (a.run >= 0 && (a.init != Init::Covered || static_cast<size_t>(a.run) >= b.runs.size()))
                        fail(TAD_ERR_INVALID_ARGUMENT, "plan: an allocation names run #" + std::to_string(a.run) +
                                                           " of a branch of " + std::to_string(b.runs.size()) +
                                                           " runs" + (a.init != Init::Covered ? " (not Covered)" : ""));
}

// Every kernel index a run names is one of the plan's kernels.
void check_kernels(const Plan &p) {
    auto check = [&](const Run &r) {
        if (r.kernel < 0 || static_cast<size_t>(r.kernel) >= p.kernels.size())
            fail(TAD_ERR_INVALID_ARGUMENT,
                 "plan: a run names kernel #" + std::to_string(r.kernel) + " of " + std::to_string(p.kernels.size()));
        if (r.args.size() != p.kernels[static_cast<size_t>(r.kernel)].fn.params.size())
            fail(TAD_ERR_INVALID_ARGUMENT,
                 "plan: a run of " + p.kernels[static_cast<size_t>(r.kernel)].fn.name + " binds " +
                     std::to_string(r.args.size()) + " arguments to " +
                     std::to_string(p.kernels[static_cast<size_t>(r.kernel)].fn.params.size()) + " parameters");
    };
    for (const Step &s : p.steps)
        for (const Case &c : s.cases)
            for (const Branch &b : c.branches) {
                if (b.sizing) check(*b.sizing);
                for (const Run &r : b.runs) check(r);
            }
}

}  // namespace

Json to_json(const Plan &p) {
    Json o = Json::object();
    put_header(o, p);
    JsonRef kernels = o.set_array("kernels");
    for (const Kernel &k : p.kernels) put_kernel(kernels.push_object(), k);
    JsonRef prologue = o.set_array("prologue");
    for (const Alloc &a : p.prologue) put_alloc(prologue.push_object(), a);
    JsonRef steps = o.set_array("steps");
    for (const Step &s : p.steps) put_step(steps.push_object(), s);
    JsonRef results = o.set_array("results");
    for (const Result &r : p.results) {
        JsonRef x = results.push_object();
        x.set_bool("present", r.present);
        x.set("tensor", tensor(r.tensor));
    }
    JsonRef snapshots = o.set_array("snapshots");
    for (const Snapshot &s : p.snapshots) {
        JsonRef x = snapshots.push_object();
        x.set("before", static_cast<int64_t>(s.before));
        x.set("launch", static_cast<int64_t>(s.launch));
        x.set("param", s.param);
    }
    return o;
}

Plan from_json(JsonRef j) {
    if (!j.is_object()) fail(TAD_ERR_INVALID_ARGUMENT, "plan: not a JSON object");
    Plan p;
    read_header(j, p);
    for (size_t i = 0; i < j.at("kernels").size(); ++i) p.kernels.push_back(kernel(j.at("kernels")[i]));
    for (size_t i = 0; i < j.at("prologue").size(); ++i) p.prologue.push_back(alloc(j.at("prologue")[i]));
    for (size_t i = 0; i < j.at("steps").size(); ++i) p.steps.push_back(step(j.at("steps")[i]));
    for (size_t i = 0; i < j.at("results").size(); ++i) {
        JsonRef x = j.at("results")[i];
        p.results.push_back({x.at("present").boolean(), tensor(x.at("tensor"))});
    }
    for (size_t i = 0; i < j.at("snapshots").size(); ++i) {
        JsonRef x = j.at("snapshots")[i];
        p.snapshots.push_back({static_cast<size_t>(x.at("before").integer()),
                               static_cast<size_t>(x.at("launch").integer()), x.at("param").str()});
    }
    check_kernels(p);
    check_alloc_runs(p);
    return p;
}

}  // namespace tad::plan
