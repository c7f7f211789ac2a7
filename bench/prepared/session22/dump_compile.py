"""torch.compile's code for a file's reference() forward + backward (TORCH_LOGS=output_code)."""
import importlib.util, sys, torch
sys.path.insert(0, "src/runtime/python")
import tad_userfile; tad_userfile.install_tad_shim()
path, dims = sys.argv[1], eval(sys.argv[2])
spec = importlib.util.spec_from_file_location("f", path); f = importlib.util.module_from_spec(spec); spec.loader.exec_module(f)
torch.manual_seed(0)
args, kwargs = f.make_args({**dims, "device": "cuda", "dtype": "float16"})
args = [a.detach().requires_grad_(True) if torch.is_tensor(a) and a.is_floating_point() else a for a in args]
out = torch.compile(f.reference)(*args, **kwargs)
out.backward(torch.ones_like(out))
torch.cuda.synchronize()
