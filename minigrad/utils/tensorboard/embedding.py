"""``SummaryWriter.add_embedding``: the files TensorBoard's Projector reads, laid out as PyTorch writes them.

For an embedding ``tag`` at ``step``, in ``<log_dir>/<step, 5 digits>/<tag, with % / and \\ escaped>/``:
``tensors.tsv`` (one row per point, tab-separated values), ``metadata.tsv`` (a label per line, or a header
and tab-separated columns), ``sprite.png`` (the thumbnails tiled in a square grid, ceil(sqrt(N)) per row);
and ``<log_dir>/projector_config.pbtxt`` listing every embedding written so far.
"""
import math
import os

import numpy as np

from . import summary as _summary


def _escaped(tag):
    return tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")


def write_embedding(log_dir, config, mat, metadata, label_img, step, tag, metadata_header):
    subdir = f"{str(step).zfill(5)}/{_escaped(tag)}"
    save_path = os.path.join(log_dir, subdir)
    if os.path.isdir(save_path):
        print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
    elif os.path.exists(save_path):
        raise NotADirectoryError(f"Path: `{save_path}` exists, but is a file. Cannot proceed.")
    else:
        os.makedirs(save_path)
    if metadata is not None:
        if mat.shape[0] != len(metadata):
            raise AssertionError("#labels should equal with #data points")
        _write_metadata(metadata, save_path, metadata_header)
    if label_img is not None:
        images = _summary.as_array(label_img)
        if mat.shape[0] != images.shape[0]:
            raise AssertionError("#images should equal with #data points")
        _write_sprite(images, save_path)
    if mat.ndim != 2:
        raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
    with open(os.path.join(save_path, "tensors.tsv"), "wb") as f:
        f.write("".join("\t".join(str(v.item()) for v in row) + "\n" for row in mat).encode())

    from google.protobuf import text_format
    from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo
    info = EmbeddingInfo(tensor_name=f"{tag}:{str(step).zfill(5)}", tensor_path=os.path.join(subdir, "tensors.tsv"))
    if metadata is not None:
        info.metadata_path = os.path.join(subdir, "metadata.tsv")
    if label_img is not None:
        info.sprite.image_path = os.path.join(subdir, "sprite.png")
        info.sprite.single_image_dim.extend([images.shape[3], images.shape[2]])      # (width, height)
    config.embeddings.extend([info])
    with open(os.path.join(log_dir, "projector_config.pbtxt"), "wb") as f:
        f.write(text_format.MessageToString(config).encode())


def _write_metadata(metadata, save_path, header):
    if not header:
        lines = [str(x) for x in metadata]
    else:
        if len(header) != len(metadata[0]):
            raise AssertionError("len of header must be equal to the number of columns in metadata")
        lines = ["\t".join(str(e) for e in row) for row in [header] + list(metadata)]
    with open(os.path.join(save_path, "metadata.tsv"), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())


def _write_sprite(images, save_path):
    """The (N, C, H, W) thumbnails, values in [0, 1], tiled ceil(sqrt(N)) to a row on a square canvas as wide
    as the grid (the rows below the grid black)."""
    grid = _summary._grid(images, columns=math.ceil(images.shape[0] ** 0.5))        # (3, rows*H, cols*W)
    side = grid.shape[2]
    square = np.zeros((side, side, 3))
    square[:grid.shape[1]] = grid.transpose(1, 2, 0)
    with open(os.path.join(save_path, "sprite.png"), "wb") as f:
        f.write(_summary.png(np.uint8((square * 255).clip(0, 255))))
