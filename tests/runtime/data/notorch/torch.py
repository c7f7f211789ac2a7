# Put first on PYTHONPATH by the runtime tests to play an interpreter without torch.
raise ImportError("torch is hidden by tests/runtime/data/notorch")
