"""``minigrad.utils.tensorboard.SummaryWriter`` (issue 28, item 4): the same calls made on PyTorch's
SummaryWriter and on minigrad's, the event files read back with TensorBoard's own reader
(``event_accumulator``) and compared (tags, steps, values, histogram buckets, decoded image pixels, text,
the runs of ``add_scalars``); the default log directory; the ImportError without tensorboard; and a
tensorboard-logging training loop written once, run in both libraries."""
import io
import os
import re
import sys

import numpy as np
import pytest

import minigrad as mg
from tests.mirror import torch_or_skip

pytest.importorskip("tensorboard", reason='tensorboard not installed (pip install "minigrad[tensorboard]")')
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402

RNG = np.random.default_rng(0)
WALLTIME = 1.7e9


def read(log_dir):
    """Everything TensorBoard's reader finds in ``log_dir``: per tag, the (step, wall time, payload) list."""
    acc = ea.EventAccumulator(str(log_dir), size_guidance={ea.IMAGES: 0, ea.HISTOGRAMS: 0, ea.TENSORS: 0,
                                                           ea.SCALARS: 0, ea.AUDIO: 0})
    acc.Reload()
    tags = acc.Tags()
    found = {"tags": {k: sorted(v) for k, v in tags.items() if isinstance(v, list)}}
    for tag in tags["scalars"]:
        found["scalar " + tag] = [(e.step, e.wall_time, e.value) for e in acc.Scalars(tag)]
    for tag in tags["histograms"]:
        found["histogram " + tag] = [(e.step, e.wall_time, _histogram(e.histogram_value)) for e in acc.Histograms(tag)]
    for tag in tags["images"]:
        found["image " + tag] = [(e.step, e.wall_time, e.width, e.height, _pixels(e.encoded_image_string))
                                 for e in acc.Images(tag)]
    for tag in tags["audio"]:
        found["audio " + tag] = [(e.step, e.wall_time, e.sample_rate, e.length_frames, e.encoded_audio_string)
                                 for e in acc.Audio(tag)]
    for tag in tags["tensors"]:
        found["tensor " + tag] = [(e.step, e.wall_time, e.tensor_proto.SerializeToString()) for e in acc.Tensors(tag)]
    return found


def _histogram(h):
    return (h.min, h.max, h.num, h.sum, h.sum_squares, list(h.bucket_limit), list(h.bucket))


def _pixels(png_bytes):
    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png_bytes))).tolist()


def write_both(tmp_path, calls):
    """``calls(writer, lib)`` with PyTorch's writer and with minigrad's: what each wrote, as ``read`` sees it."""
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    results = []
    for lib, writer_class in ((torch, TorchWriter), (mg, SummaryWriter)):
        log_dir = tmp_path / lib.__name__
        with writer_class(str(log_dir)) as writer:
            calls(writer, lib)
        runs = sorted(p.name for p in log_dir.iterdir() if p.is_dir())
        results.append((read(log_dir), {run: read(log_dir / run) for run in runs}))
    return results


def assert_same_events(ours, theirs):
    assert ours[0].keys() == theirs[0].keys()
    for key in theirs[0]:
        assert ours[0][key] == theirs[0][key], key
    assert ours[1] == theirs[1]


def test_scalars_as_torch(tmp_path):
    values = RNG.standard_normal(5)

    def calls(writer, lib):
        for step, v in enumerate(values):
            writer.add_scalar("loss/train", lib.tensor(v), step, walltime=WALLTIME + step)
            writer.add_scalar("lr", float(v) * 0.1, step * 10, walltime=WALLTIME)
            writer.add_scalar("acc", np.float64(v), walltime=WALLTIME)
        writer.add_scalar("new", lib.tensor([2.5]), 3, walltime=WALLTIME, new_style=True)
        writer.add_scalar("new64", 1 / 3, 4, walltime=WALLTIME, new_style=True, double_precision=True)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)
    assert [s for s, _, _ in ours[0]["scalar loss/train"]] == [0, 1, 2, 3, 4]


def test_add_scalars_writes_one_run_per_tag_as_torch(tmp_path):
    def calls(writer, lib):
        for step in range(3):
            writer.add_scalars("loss/all", {"train": lib.tensor(1.0 / (step + 1)), "val": 2.0 * step}, step,
                               walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)
    assert sorted(ours[1]) == ["loss_all_train", "loss_all_val"]


@pytest.mark.parametrize("kind", ["normal", "ints", "constant", "max_bins", "fd bins", "bin count"])
def test_histograms_as_torch(tmp_path, kind):
    values = {"normal": RNG.standard_normal((10, 20)), "ints": RNG.integers(-5, 5, 300),
              "constant": np.full(7, 0.25), "max_bins": RNG.standard_normal(1000) * 3,
              "fd bins": RNG.standard_normal(200), "bin count": RNG.random(50)}[kind]
    options = {"max_bins": dict(max_bins=30), "fd bins": dict(bins="fd"), "bin count": dict(bins=7)}.get(kind, {})

    def calls(writer, lib):
        writer.add_histogram("h", lib.tensor(values), 7, walltime=WALLTIME, **options)
        writer.add_histogram("h", values * 2, 8, walltime=WALLTIME, **options)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


def test_histogram_raw_as_torch(tmp_path):
    def calls(writer, lib):
        writer.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                                 bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=1,
                                 walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


@pytest.mark.parametrize("kind,shape,dataformats", [
    ("float", (3, 5, 6), "CHW"), ("float", (5, 6, 3), "HWC"), ("float", (1, 4, 4), "CHW"), ("float", (4, 4), "HW"),
    ("uint8", (3, 4, 5), "CHW"), ("float", (4, 5, 3), "HWC"), ("clipped", (3, 2, 2), "CHW"),
])
def test_add_image_as_torch(tmp_path, kind, shape, dataformats):
    if kind == "uint8":
        array = RNG.integers(0, 256, shape).astype(np.uint8)
    else:
        array = RNG.random(shape) * (3 if kind == "clipped" else 1) - (1 if kind == "clipped" else 0)

    def calls(writer, lib):
        writer.add_image("img", lib.tensor(array), 2, walltime=WALLTIME, dataformats=dataformats)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


@pytest.mark.parametrize("n,dataformats", [(3, "NCHW"), (10, "NCHW"), (2, "NHWC"), (9, "NCHW")])
def test_add_images_tiles_a_batch_as_torch(tmp_path, n, dataformats):
    shape = (n, 3, 4, 5) if dataformats == "NCHW" else (n, 4, 5, 3)
    array = RNG.random(shape)
    if n == 9:
        array = array[:, :1]            # one channel, repeated to three

    def calls(writer, lib):
        writer.add_images("batch", lib.tensor(array), 0, walltime=WALLTIME, dataformats=dataformats)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


@pytest.mark.parametrize("amplitude", [0.5, 3.0])
def test_add_audio_as_torch(tmp_path, amplitude):
    wave = amplitude * np.sin(np.linspace(0, 40, 800)).reshape(1, -1)

    def calls(writer, lib):
        writer.add_audio("sound", lib.tensor(wave), 4, sample_rate=8000, walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)
    assert ours[0]["audio sound"][0][2] == 8000


def test_add_text_as_torch(tmp_path):
    def calls(writer, lib):
        writer.add_text("notes", "lr = 0.1, **bold** é", 0, walltime=WALLTIME)
        writer.add_text("notes", "second", 5, walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


def raw_events(log_dir):
    """Every event of every event file under ``log_dir`` (wall times left out): (run, step, summary bytes)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    events = []
    for path in sorted(log_dir.rglob("events.out.tfevents.*")):
        run = str(path.parent.relative_to(log_dir))
        for event in EventFileLoader(str(path)).Load():
            if event.HasField("summary"):
                events.append((run, event.step, event.summary.SerializeToString(deterministic=True)))
    return events


@pytest.mark.parametrize("domains", [None, {"optimizer": ["adam", "sgd"], "lr": [0.1, 0.01]}])
def test_add_hparams_as_torch(tmp_path, domains):
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    found = []
    for lib, writer_class in ((torch, TorchWriter), (mg, SummaryWriter)):
        log_dir = tmp_path / lib.__name__
        with writer_class(str(log_dir)) as writer:
            writer.add_hparams({"lr": 0.1, "optimizer": "adam", "layers": 3, "dropout": None, "flag": True,
                                "scale": lib.tensor([0.5])},
                               {"hparam/accuracy": 0.9, "hparam/loss": 0.25}, hparam_domain_discrete=domains,
                               run_name="trial", global_step=2)
        found.append(raw_events(log_dir))
    assert found[0] == found[1] and len(found[0]) == 5
    with pytest.raises(TypeError, match="should be dictionary"):
        SummaryWriter(str(tmp_path / "bad")).add_hparams([("lr", 0.1)], {})


def test_add_figure_as_torch(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def figure(k):
        fig = plt.figure(figsize=(2, 1.5), dpi=40)
        plt.plot(np.arange(10) ** k)
        return fig

    def calls(writer, lib):
        writer.add_figure("one", figure(1), 0, walltime=WALLTIME)
        writer.add_figure("two", [figure(1), figure(2)], 1, walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)
    assert ours[0]["image one"][0][2:4] == (80, 60)


@pytest.mark.parametrize("options", [{}, {"num_thresholds": 11}, {"weights": "random"}, {"num_thresholds": 200}])
def test_add_pr_curve_as_torch(tmp_path, options):
    labels, predictions = RNG.integers(0, 2, 50), RNG.random(50)
    weights = RNG.random(50) if options.get("weights") == "random" else None
    kwargs = dict(options, weights=weights)

    def calls(writer, lib):
        writer.add_pr_curve("pr", lib.tensor(labels), lib.tensor(predictions), 3, walltime=WALLTIME, **kwargs)
        writer.add_pr_curve_raw("raw", [5, 3, 1], [4, 2, 0], [0, 2, 4], [0, 2, 4], [0.5, 0.6, 1.0], [1.0, 0.6, 0.2],
                                1, num_thresholds=3, walltime=WALLTIME)
    ours, theirs = write_both(tmp_path, calls)
    assert_same_events(ours, theirs)


def test_add_embedding_writes_the_projector_files_as_torch(tmp_path):
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    mat = RNG.standard_normal((5, 3)).astype(np.float32)
    images = RNG.random((5, 1, 4, 3))
    files = []
    for lib, writer_class in ((torch, TorchWriter), (mg, SummaryWriter)):
        log_dir = tmp_path / lib.__name__
        with writer_class(str(log_dir)) as writer:
            writer.add_embedding(lib.tensor(mat), metadata=list("abcde"), label_img=lib.tensor(images), tag="emb/1")
            writer.add_embedding(lib.tensor(mat * 2), metadata=[[i, i * i] for i in range(5)], global_step=7,
                                 metadata_header=["n", "square"])
        found = {}
        for path in sorted(log_dir.rglob("*")):
            if path.is_file() and "tfevents" not in path.name:
                found[str(path.relative_to(log_dir))] = (_pixels(path.read_bytes()) if path.suffix == ".png"
                                                        else path.read_bytes())
        files.append(found)
    assert files[0] == files[1]
    assert "00000/emb%2f1/sprite.png" in files[1]


def graph_models(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1)
            self.bn = nn.BatchNorm2d(3)

        def forward(self, x):
            return torch.relu(self.bn(self.conv(x))) + 1

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.fc = nn.Linear(3 * 4 * 4, 2)

        def forward(self, img, scale):
            return self.fc(self.block(img).flatten(1)) * scale

    mlp = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    return [(Net(), (torch.ones(5, 2, 4, 4), torch.ones(1))), (mlp, torch.ones(5, 3))]


def _graph_summary(graph):
    """What both libraries' graphs must agree on: the IO nodes (names without the '.N' of a value name, and
    shapes), the module scopes holding operations, and the parameters' places."""
    def shape(node):
        if "_output_shapes" not in node.attr:
            return None
        return [d.size for d in node.attr["_output_shapes"].list.shape[0].dim]
    io = sorted((re.sub(r"\.\d+$", "", n.name), shape(n)) for n in graph.node if n.op == "IO Node")
    op_scopes = {n.name.rpartition("/")[0] for n in graph.node if n.op != "IO Node" and not n.op.startswith("prim::")}
    params = {n.name for n in graph.node if n.op == "prim::GetAttr"}
    return io, op_scopes, params


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # PyTorch's writer traces with torch.jit
@pytest.mark.parametrize("which", [0, 1])
def test_add_graph_has_torch_s_scopes_inputs_and_outputs(tmp_path, which):
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    summaries, tags = [], []
    for lib, writer_class in ((torch, TorchWriter), (mg, SummaryWriter)):
        model, example = graph_models(lib)[which]
        with writer_class(str(tmp_path / lib.__name__)) as writer:
            writer.add_graph(model, example)
        acc = ea.EventAccumulator(str(tmp_path / lib.__name__))
        acc.Reload()
        tags.append((acc.Tags()["graph"], acc.Tags()["run_metadata"]))
        summaries.append(acc.Graph())
    (io_th, scopes_th, params_th), (io_mg, scopes_mg, _) = [_graph_summary(g) for g in summaries]
    assert tags[0] == tags[1] == (True, ["step1"])
    assert io_mg == io_th and scopes_mg == scopes_th
    ours = {n.name for n in summaries[1].node}
    for param in params_th:   # PyTorch: '<scope>/weight/weight.5'; minigrad: '<scope>/weight'
        assert re.sub(r"/[^/]*$", "", param) in ours, param
    by_name = {n.name: n for n in summaries[1].node}
    reached, todo = set(), [n for n in by_name if n.startswith("output/")]
    while todo:                       # every input feeds the output
        name = todo.pop()
        reached.add(name)
        todo.extend(i for i in by_name[name].input if i not in reached)
    assert {n for n in by_name if n.startswith("input/")} <= reached


def test_purge_step_and_reopen_after_close_as_torch(tmp_path):
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    found = []
    for lib, writer_class in ((torch, TorchWriter), (mg, SummaryWriter)):
        log_dir = tmp_path / lib.__name__
        writer = writer_class(str(log_dir))
        for step in range(5):
            writer.add_scalar("x", float(step), step, walltime=WALLTIME)
        writer.close()
        writer.close()                                   # twice is fine
        writer = writer_class(str(log_dir), purge_step=3)
        writer.add_scalar("x", 30.0, 3, walltime=WALLTIME + 1)
        writer.close()
        writer.add_scalar("x", 40.0, 4, walltime=WALLTIME + 2)   # after close: a new event file
        writer.flush()
        writer.close()
        found.append(read(log_dir)["scalar x"])
    assert found[0] == found[1]


def test_unsupported_calls_raise_clearly(tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter
    with SummaryWriter(str(tmp_path)) as writer:
        with pytest.raises(NotImplementedError, match="add_video"):
            writer.add_video("v", mg.ones(1, 2, 3, 4, 4))
        with pytest.raises(AssertionError, match="one element"):
            writer.add_scalar("bad", mg.ones(2))


def test_default_log_dir_as_torch(tmp_path, monkeypatch):
    torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    monkeypatch.chdir(tmp_path)
    ours, theirs = SummaryWriter(comment="_lr0.1"), TorchWriter(comment="_lr0.1")
    ours.close()
    theirs.close()
    pattern = r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(__import__("socket").gethostname()) + "_lr0.1"
    assert re.fullmatch(pattern, ours.log_dir) and re.fullmatch(pattern, theirs.log_dir)
    assert ours.get_logdir() == ours.log_dir and os.path.isdir(ours.log_dir)
    assert SummaryWriter("given", comment="ignored").log_dir == "given"


def test_missing_tensorboard_is_a_clear_import_error(monkeypatch, tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter
    monkeypatch.setitem(sys.modules, "tensorboard.summary.writer.event_file_writer", None)
    with pytest.raises(ImportError, match=r'pip install "minigrad\[tensorboard\]"'):
        SummaryWriter(str(tmp_path))


# --------------------------------------------------------------------------- a training loop that logs
def train_and_log(torch, SummaryWriter, log_dir, data, targets, init):
    """A training loop in the style of public code: an MLP, SGD with momentum, the loss logged every step,
    weight and gradient histograms and the first layer's weights as an image every other step."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).double()
    model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    criterion = nn.MSELoss()
    writer = SummaryWriter(log_dir)
    x, y = torch.tensor(data), torch.tensor(targets)
    losses = []
    for epoch in range(6):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        writer.add_scalar("Loss/train", loss.item(), epoch, walltime=WALLTIME + epoch)
        if epoch % 2 == 0:
            for name, param in model.named_parameters():
                writer.add_histogram(name, param, epoch, walltime=WALLTIME + epoch)
                writer.add_histogram(name + ".grad", param.grad, epoch, walltime=WALLTIME + epoch)
            weight = model[0].weight.detach()
            writer.add_image("layer0", (weight - weight.min()) / (weight.max() - weight.min()), epoch,
                             walltime=WALLTIME + epoch, dataformats="HW")
    writer.add_text("summary", f"final loss {losses[-1]:.6f}", len(losses), walltime=WALLTIME)
    writer.close()
    return losses, {k: v.detach().numpy() for k, v in model.state_dict().items()}


def test_training_loop_logs_as_in_torch(tmp_path):
    torch = torch_or_skip()
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    rng = np.random.default_rng(1)
    data, targets = rng.standard_normal((16, 4)), rng.standard_normal((16, 2))
    init = {"0.weight": rng.standard_normal((8, 4)) * 0.5, "0.bias": rng.standard_normal(8) * 0.1,
            "2.weight": rng.standard_normal((2, 8)) * 0.5, "2.bias": rng.standard_normal(2) * 0.1}
    losses_th, state_th = train_and_log(torch, TorchWriter, str(tmp_path / "torch"), data, targets, init)
    losses_mg, state_mg = train_and_log(mg, SummaryWriter, str(tmp_path / "minigrad"), data, targets, init)
    np.testing.assert_allclose(losses_mg, losses_th, rtol=1e-9)
    for k in state_th:
        np.testing.assert_allclose(state_mg[k], state_th[k], rtol=1e-9, atol=1e-12, err_msg=k)
    ours, theirs = read(tmp_path / "minigrad"), read(tmp_path / "torch")
    assert ours["tags"] == theirs["tags"]
    for key in theirs:
        if key.startswith("histogram"):   # sums of float64 values: equal to rounding
            for (s1, w1, h1), (s2, w2, h2) in zip(ours[key], theirs[key]):
                assert (s1, w1, h1[2], h1[6]) == (s2, w2, h2[2], h2[6]), key
                np.testing.assert_allclose(h1[:2] + h1[3:5], h2[:2] + h2[3:5], rtol=1e-9)
                np.testing.assert_array_equal(h1[5], h2[5])
        else:
            assert ours[key] == theirs[key], key
