import sys, os, importlib.util, torch
os.chdir(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../src/runtime/python"))
import tad_userfile; tad_userfile.install_tad_shim()
def load(p):
    spec = importlib.util.spec_from_file_location(os.path.basename(p)[:-3], p); m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); return m
dev = "cuda" if torch.cuda.is_available() else "cpu"
def run(mod, args):
    args = [a.detach().clone().requires_grad_(a.is_floating_point()) if torch.is_tensor(a) else a for a in args]
    y = mod.forward(*args); g = torch.ones_like(y) * 0.37 + torch.arange(y.numel(), device=y.device).view(y.shape).float().sin()
    y.backward(g.to(y.dtype))
    return [a.grad for a in args if torch.is_tensor(a) and a.grad is not None]
torch.manual_seed(0)
for gen, var, mk in [("ln_gen.py", "ln_cast1.py", lambda: (torch.randn(37, 100, device=dev), torch.randn(100, device=dev), torch.randn(100, device=dev))),
                     ("ln_gen.py", "ln_both.py", lambda: (torch.randn(37, 100, device=dev), torch.randn(100, device=dev), torch.randn(100, device=dev))),
                     ("ln_gen.py", "ln_tail.py", lambda: (torch.randn(37, 100, device=dev), torch.randn(100, device=dev), torch.randn(100, device=dev))),
                     ("rms_gen.py", "rms_tail.py", lambda: (torch.randn(37, 100, device=dev), torch.randn(100, device=dev))),
                     ("sm_gen.py", "sm_y.py", lambda: (torch.randn(37, 100, device=dev),)),
                     ("gn_gen.py", "gn_rev.py", lambda: (torch.randn(3, 32, 300, device=dev), torch.randn(32, device=dev), torch.randn(32, device=dev), 8))]:
    args = mk()
    a, b = run(load(gen), args), run(load(var), args)
    print(var, [float((x - y).abs().max()) for x, y in zip(a, b)], [tuple(x.shape) for x in b])
spec = importlib.util.spec_from_file_location("fa_file", "../../tests/pipeline/data/transpose/flash_attention_tutorial.py")
fa_file = importlib.util.module_from_spec(spec); spec.loader.exec_module(fa_file)
args, kwargs = fa_file.make_args({"B": 1, "H": 2, "N": 512, "D": 64, "causal": False, "device": dev, "dtype": "float16"})
outs = []
for name in ("fa_def.py", "fa_rc.py", "fa_rcT.py"):
    m = load(name)
    a = [x.detach().clone().requires_grad_(True) if torch.is_tensor(x) and x.is_floating_point() else x for x in args]
    y = m.forward(*a, **kwargs)
    y.backward(torch.ones_like(y) * 0.1 + torch.randn_like(y) * 0 + torch.arange(y.numel(), device=y.device).view(y.shape).sin().to(y.dtype))
    outs.append([x.grad.float() for x in a if torch.is_tensor(x) and x.grad is not None])
for i, name in ((1, "rc"), (2, "rcT")):
    print("fa", name, [float((x - y).abs().max()) for x, y in zip(outs[0], outs[i])], [float(x.abs().max()) for x in outs[0]])
