"""The ``Summary`` protocol buffers ``SummaryWriter`` writes, built from minigrad tensors, arrays or numbers.

Each function returns a ``tensorboard.compat.proto.summary_pb2.Summary`` holding what TensorBoard's
plugins read, laid out as PyTorch's ``SummaryWriter`` lays it out (so the same calls give the same tags,
steps and values): a scalar as ``simple_value`` (or a float/double ``TensorProto`` with the scalars
plugin's metadata); a histogram as a ``HistogramProto`` whose buckets run from the first to the last
non-empty bin of ``np.histogram`` with one empty bucket in front; an image as PNG bytes (HWC uint8;
float images are scaled by 255); a text as a one-element string tensor tagged ``<tag>/text_summary``.
"""
import struct
import zlib

import numpy as np


def as_array(value):
    """A minigrad tensor (detached), an ndarray, or a Python/NumPy number as an ndarray."""
    from ...tensor import Tensor
    if isinstance(value, Tensor):
        return value.detach().numpy()
    if isinstance(value, np.ndarray):
        return value
    if np.isscalar(value):
        return np.array([value])
    raise NotImplementedError(f"Got {type(value)}, but numpy array or minigrad tensor are expected.")


def _protos():
    from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2
    return summary_pb2, tensor_pb2, tensor_shape_pb2


def scalar(tag, value, new_style=False, double_precision=False):
    summary_pb2, tensor_pb2, _ = _protos()
    array = as_array(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} and "
                             f"{array.ndim} dimensions.")
    number = float(array)
    if not new_style:
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=number)])
    tensor = (tensor_pb2.TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision
              else tensor_pb2.TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def default_bins():
    """TensorFlow's histogram edges: 0 and +-v for v = 1e-12, each next one 10% larger (by repeated
    multiplication, as TensorFlow rounds them), below 1e20."""
    positive, v = [], 1e-12
    while v < 1e20:
        positive.append(v)
        v *= 1.1
    return [-v for v in reversed(positive)] + [0.0] + positive


def histogram_proto(values, bins, max_bins=None):
    """The HistogramProto of ``values`` (flattened, as float64) binned by ``bins`` (np.histogram's argument).
    With ``max_bins``, groups of adjacent bins are merged (the last group padded with empty bins) until at
    most ``max_bins`` remain. Only the bins from the first to the last non-empty one are kept, preceded by
    one empty bucket; each bucket is stored with its upper edge as its limit."""
    summary_pb2, _, _ = _protos()
    values = values.reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        counts = np.concatenate([counts, np.zeros(-len(counts) % group, counts.dtype)])
        counts = counts.reshape(-1, group).sum(axis=1)                        # (bins / group,)
        edges = np.append(edges[:-1:group], edges[-1])
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    first, last = filled[0], filled[-1]
    bucket = np.concatenate([[0], counts[first:last + 1]])
    limits = edges[first:last + 2]     # the empty bucket ends where the first filled bin starts
    return summary_pb2.HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                                      sum_squares=values.dot(values), bucket_limit=limits.tolist(),
                                      bucket=bucket.tolist())


def histogram(tag, values, bins, max_bins=None):
    summary_pb2, _, _ = _protos()
    proto = histogram_proto(as_array(values).astype(float), bins, max_bins)
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, histo=proto)])


def histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):  # noqa: A002
    summary_pb2, _, _ = _protos()
    proto = summary_pb2.HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                                       bucket_limit=bucket_limits, bucket=bucket_counts)
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, histo=proto)])


# --------------------------------------------------------------------------- images
def to_hwc(image, dataformats):
    """``image`` in ``dataformats`` (letters among N, C, H, W) as an (H, W, C) array with C = 3 or 4: a
    batch is tiled in a grid 8 images wide, one channel (or none) is repeated to three."""
    dataformats = dataformats.upper()
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if image.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {image.shape}, "
                             f"input_format: {dataformats}")
    if len(dataformats) == 4:
        batch = image.transpose([dataformats.index(c) for c in "NCHW"])       # (N, C, H, W)
        return _grid(batch).transpose(1, 2, 0)
    if len(dataformats) == 3:
        hwc = image.transpose([dataformats.index(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    hw = image.transpose([dataformats.index(c) for c in "HW"])
    return np.stack([hw] * 3, axis=2)


def _grid(batch, columns=8):
    """(N, 1 or 3, H, W) images tiled row by row into one (3, rows*H, columns*W) canvas (zeros where empty)."""
    if batch.shape[1] == 1:
        batch = np.repeat(batch, 3, axis=1)
    if batch.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = batch.shape
    columns = min(n, columns)
    rows = -(-n // columns)
    padded = np.zeros((rows * columns, 3, h, w), batch.dtype)
    padded[:n] = batch
    return padded.reshape(rows, columns, 3, h, w).transpose(2, 0, 3, 1, 4).reshape(3, rows * h, columns * w)


def png(pixels):
    """PNG bytes of an (H, W, C) uint8 image, C = 1 (grey), 3 (RGB) or 4 (RGBA): one IDAT chunk of the rows,
    each with filter type 0, deflated."""
    h, w, c = pixels.shape
    colour = {1: 0, 3: 2, 4: 6}[c]

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    rows = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * c)], axis=1)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, colour, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def image(tag, img, rescale=1, dataformats="NCHW"):
    """An image summary: uint8 pixels as given, any other dtype scaled by 255, clipped to [0, 255]."""
    summary_pb2, _, _ = _protos()
    hwc = to_hwc(as_array(img), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    h, w, c = pixels.shape
    if rescale != 1:
        pixels = _resized(pixels, int(h * rescale), int(w * rescale))
    encoded = summary_pb2.Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=png(pixels))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, image=encoded)])


def _resized(pixels, height, width):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("add_image(rescale=...) resizes with Pillow: pip install pillow") from None
    resized = Image.fromarray(pixels).resize((width, height), Image.Resampling.LANCZOS)
    return np.asarray(resized).reshape(height, width, -1)


def text(tag, string):
    summary_pb2, tensor_pb2, tensor_shape_pb2 = _protos()
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name="text",
                                                    content=TextPluginData(version=0).SerializeToString())
    tensor = tensor_pb2.TensorProto(dtype="DT_STRING", string_val=[string.encode("utf_8")],
                                    tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag=tag + "/text_summary", metadata=summary_pb2.SummaryMetadata(plugin_data=plugin), tensor=tensor)])


# --------------------------------------------------------------------------- figures and hyperparameters
def figure_pixels(figure, close=True):
    """A matplotlib figure drawn by the Agg renderer, as (3, H, W) uint8 RGB (the alpha channel dropped);
    closed afterwards unless ``close=False``."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    width, height = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(height, width, 4)
    if close:
        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The three summaries TensorBoard's HParams plugin reads: the experiment (the hyperparameters' names,
    types and discrete domains, and the metrics' tags), the session start (the values) and the session end.
    Numbers (bools too, being ints) and tensors are stored as float64 values, strings as strings; None is
    left out."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    from ...tensor import Tensor
    summary_pb2, _, _ = _protos()
    for what, value in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(value, dict):
            raise TypeError(f"parameter: {what} should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    start, infos = SessionStartInfo(), []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            start.hparams[k].number_value = as_array(v).reshape(-1)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        if isinstance(v, (int, float)):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(start.hparams[k], field, v)
        domain = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
                  if k in domains else None)
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def plugin_summary(tag, **content):
        data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content).SerializeToString()
        plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME, content=data)
        return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
            tag=tag, metadata=summary_pb2.SummaryMetadata(plugin_data=plugin))])
    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (plugin_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            plugin_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            plugin_summary(metadata.SESSION_END_INFO_TAG,
                           session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))


# --------------------------------------------------------------------------- precision-recall curves
def pr_counts(labels, predictions, num_thresholds, weights=None):
    """The (6, T) table of the PR-curve plugin for T thresholds: TP, FP, TN, FN, precision, recall when
    predicting positive at or above threshold t / (T - 1). A prediction p falls in bucket floor(p (T - 1));
    the positives (weighted) of the buckets from t up are the TP at threshold t, the negatives the FP."""
    weights = 1.0 if weights is None else weights
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
    positive = labels.astype(np.float64)

    def at_or_above(weight):
        counts, _ = np.histogram(bucket, bins=num_thresholds, range=(0, num_thresholds - 1), weights=weight)
        return np.cumsum(counts[::-1])[::-1]
    tp, fp = at_or_above(positive * weights), at_or_above((1.0 - positive) * weights)
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(1e-7, tp + fp)
    recall = tp / np.maximum(1e-7, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(tag, table, num_thresholds):
    """A PR-curve summary of the (6, T) ``table`` (``pr_counts``'s rows), as float32 values."""
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
    summary_pb2, tensor_pb2, tensor_shape_pb2 = _protos()
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name="pr_curves", content=content)
    tensor = tensor_pb2.TensorProto(dtype="DT_FLOAT", float_val=table.reshape(-1).tolist(),
                                    tensor_shape=tensor_shape_pb2.TensorShapeProto(
                                        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=n) for n in table.shape]))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(
        tag=tag, metadata=summary_pb2.SummaryMetadata(plugin_data=plugin), tensor=tensor)])


# --------------------------------------------------------------------------- audio
def audio(tag, samples, sample_rate=44100):
    """A mono audio summary: the samples (any shape squeezing to 1-D, amplitudes clipped to [-1, 1] with
    PyTorch's warning) as 16-bit PCM in a WAV file."""
    import io
    import wave
    summary_pb2, _, _ = _protos()
    array = as_array(samples).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (array * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as buffer:
        with wave.open(buffer, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(pcm.tobytes())
        encoded = buffer.getvalue()
    sound = summary_pb2.Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                                      encoded_audio_string=encoded, content_type="audio/wav")
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, audio=sound)])
