"""``SummaryWriter``: PyTorch's TensorBoard logger for minigrad tensors, writing real event files through the
``tensorboard`` package's ``EventFileWriter`` (``pip install "minigrad[tensorboard]"``).

The log directory defaults to ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>`` as PyTorch's does;
``add_scalars`` writes each scalar of its dict to its own run, ``<log_dir>/<main_tag>_<tag>`` (``/`` in
the main tag becomes ``_``), under the main tag. Writes are queued and flushed every ``flush_secs``, every
``max_queue`` events, on ``flush()`` and on ``close()`` (or leaving a ``with`` block).
"""
import os
import time

import numpy as np

from . import summary as _summary


def _event_file_writer():
    try:
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError:
        raise ImportError('minigrad.utils.tensorboard needs the tensorboard package: '
                          'pip install "minigrad[tensorboard]"') from None
    return EventFileWriter


class FileWriter:
    """One event file in ``log_dir``: ``Summary`` and ``Event`` protos stamped with a step and a wall time."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = _event_file_writer()(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        from tensorboard.compat.proto import event_pb2
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None):
        """A (GraphDef, RunMetadata) pair: the graph, then its run metadata tagged 'step1', as PyTorch writes."""
        from tensorboard.compat.proto import event_pb2
        graph, stats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stats.SerializeToString())
        self.add_event(event_pb2.Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Writes scalars, histograms, images and text for TensorBoard, as ``torch.utils.tensorboard.SummaryWriter``."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        _event_file_writer()   # the clear ImportError now, not at the first add_*
        if not log_dir:
            import socket
            from datetime import datetime
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        self.default_bins = _summary.default_bins()

    def _get_file_writer(self):
        """The main run's writer, (re)opened if ``close()`` dropped it; a ``purge_step`` is written first."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                from tensorboard.compat.proto.event_pb2 import Event, SessionLog
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    # ----------------------------------------------------------------- what can be logged
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        summary = _summary.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each ``tag: value`` to the run ``<log_dir>/<main_tag>_<tag>``, as a scalar named ``main_tag``."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = root + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers[run].add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step,
                                            walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,  # noqa: A002
                          global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = _summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                                            walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        self._get_file_writer().add_summary(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                                            walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, tiled) as an image, drawn by the Agg renderer."""
        if isinstance(figure, list):
            pixels = np.stack([_summary.figure_pixels(f, close) for f in figure])
            self.add_image(tag, pixels, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _summary.figure_pixels(figure, close), global_step, walltime, dataformats="CHW")

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """Hyperparameters and their metrics for the HParams dashboard, in the run ``<log_dir>/<run_name>``
        (the current time by default), the metrics also logged there as scalars."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        log_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=log_dir) as run:
            for summary in summaries:
                run.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                run.add_scalar(k, v, global_step)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._get_file_writer().add_summary(_summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step,
                                            walltime)

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """A precision-recall curve of ``predictions`` (probabilities) against the 0/1 ``labels``; at most 127
        thresholds (TensorBoard's limit)."""
        num_thresholds = min(num_thresholds, 127)
        table = _summary.pr_counts(_summary.as_array(labels), _summary.as_array(predictions), num_thresholds,
                                   weights)
        self._get_file_writer().add_summary(_summary.pr_curve(tag, table, num_thresholds), global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        columns = (true_positive_counts, false_positive_counts, true_negative_counts, false_negative_counts,
                   precision, recall)
        table = np.stack([c if isinstance(c, (list, tuple)) else _summary.as_array(c) for c in columns])
        self._get_file_writer().add_summary(_summary.pr_curve(tag, table, min(num_thresholds, 127)), global_step,
                                            walltime)

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        """Points for the Projector: ``mat`` (N, D) in ``<log_dir>/<step>/<tag>/tensors.tsv``, with labels
        (``metadata.tsv``) and thumbnails (``sprite.png``), listed in ``projector_config.pbtxt``."""
        from .embedding import write_embedding
        if not hasattr(self, "_projector_config"):
            from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
            self._projector_config = ProjectorConfig()
        write_embedding(self._get_file_writer().get_logdir(), self._projector_config, _summary.as_array(mat),
                        metadata, label_img, 0 if global_step is None else global_step, tag, metadata_header)

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        """The model's graph for the Graphs tab, read from what autograd records while the model runs on
        ``input_to_model`` (``graph.py``: PyTorch traces it with torch.jit instead, so node names differ)."""
        from .graph import graph_def
        graph, stats = graph_def(model, input_to_model)
        if verbose:
            print(graph)
        self._get_file_writer().add_graph((graph, stats))

    # ----------------------------------------------------------------- lifetime
    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:   # closing twice is allowed
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


def _not_implemented(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"SummaryWriter.{name} is not implemented in minigrad (implemented: add_scalar, "
                                  "add_scalars, add_histogram, add_histogram_raw, add_image, add_images, add_figure, "
                                  "add_text, add_audio, add_hparams, add_pr_curve, add_pr_curve_raw, add_embedding)")
    method.__name__ = name
    return method


for _name in ("add_video", "add_mesh", "add_custom_scalars", "add_image_with_boxes", "add_onnx_graph",
              "add_tensor"):
    setattr(SummaryWriter, _name, _not_implemented(_name))
