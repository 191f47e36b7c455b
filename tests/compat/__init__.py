"""Programs in the styles of widely used public PyTorch code, each written once against ``torch``.

tests/test_compat.py imports every program twice (tests/torch_shim.py): with real PyTorch and with minigrad
resolved as ``torch``, and compares the two runs. Each program is a module with:

    STEPS                                   number of optimizer steps the harness runs
    make_model() -> nn.Module               built as the program builds it; the harness then loads one
                                            state_dict (made by PyTorch) into both libraries' models
    make_data(rng) -> dict of ndarrays      inputs and targets, made with NumPy from the harness' Generator
    train(model, data, steps, after_backward=None) -> list of float
                                            the program's training loop, one loss per step;
                                            ``after_backward(step)`` is called after each ``loss.backward()``
                                            and before the update, so the harness can read the gradients

Programs import torch at module level only, run on ``device = 'cuda' if torch.cuda.is_available() else
'cpu'`` where real code does, and use dropout 0 (random streams differ between the libraries). The harness
runs them in float64 (``torch.set_default_dtype``), so the programs avoid float32 casts such as ``.float()``.
Some programs expose more (generation, a checkpoint restart, init statistics) for tests of their own.
"""
