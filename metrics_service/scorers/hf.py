"""Loading HuggingFace models without surprises: local paths first, never a silent download.

A model is named by a local directory (``save_pretrained`` output) or by a hub name. A name resolves
from the local HuggingFace cache; only when no cache copy exists *and* the hub is not switched off
(``HF_HUB_OFFLINE`` / ``TRANSFORMERS_OFFLINE`` unset) is the hub asked. Anything that fails becomes a
:class:`ScorerError` that says to pass a local path.

Imports torch lazily: importing this module is cheap.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .base import ScorerError

T = TypeVar("T")

_TRUE = {"1", "true", "yes", "on"}
#: Tokenizers report this kind of number when they know no limit.
_NO_LIMIT = 1_000_000


def hub_offline() -> bool:
    """Whether the model hub is switched off for this process (``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE``)."""
    return any(os.environ.get(var, "").strip().lower() in _TRUE for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def _looks_like_path(name: str) -> bool:
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or os.sep != "/" and os.sep in name


def load_pretrained(loader: Callable[..., T], name_or_path: str | os.PathLike, what: str = "model", **kwargs: Any) -> T:
    """``loader(name_or_path, **kwargs)`` (a ``from_pretrained``), local files first, errors as ScorerError."""
    name = str(name_or_path)
    path = Path(name).expanduser()
    if path.is_dir():
        try:
            return loader(str(path), local_files_only=True, **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            raise ScorerError(f"cannot load the {what} from {path}: {exc}") from exc
    if path.exists() or _looks_like_path(name):
        raise ScorerError(f"{what} path {name!r} is not a directory holding a saved model; pass a local model directory")
    try:  # the local HuggingFace cache
        return loader(name, local_files_only=True, **kwargs)
    except (OSError, ValueError):
        pass
    if hub_offline():
        raise ScorerError(
            f"{what} {name!r} not found locally and no model hub is reachable (HF_HUB_OFFLINE); pass a local path"
        )
    try:
        return loader(name, **kwargs)
    except (OSError, ValueError) as exc:
        raise ScorerError(f"{what} {name!r} not found locally and could not be fetched ({exc}); pass a local path") from exc


def resolve_local_dir(name_or_path: str | os.PathLike, what: str = "model") -> str:
    """A local directory for ``name_or_path``: the path itself, or the cached snapshot of a hub name.

    Only consults the hub when nothing is cached and the hub is not switched off.
    """
    name = str(name_or_path)
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    if path.exists() or _looks_like_path(name):
        raise ScorerError(f"{what} path {name!r} is not a directory holding a saved model; pass a local model directory")
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(name, local_files_only=True)
    except Exception:
        pass
    if hub_offline():
        raise ScorerError(
            f"{what} {name!r} not found locally and no model hub is reachable (HF_HUB_OFFLINE); pass a local path"
        )
    try:
        return snapshot_download(name)
    except Exception as exc:
        raise ScorerError(f"{what} {name!r} not found locally and could not be fetched ({exc}); pass a local path") from exc


def worker_cores() -> int:
    """CPUs this process may run on: its affinity mask (a container's or a pinned worker's cpuset)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def use_worker_cores() -> int:
    """Let torch's CPU kernels use every core the worker is given; returns the thread count.

    torch defaults to the number of physical cores of the machine, which is wrong both ways in a container
    or a pinned worker. An explicit ``OMP_NUM_THREADS`` (e.g. several model workers on one machine) wins.
    """
    import torch

    if os.environ.get("OMP_NUM_THREADS", "").strip():
        return torch.get_num_threads()
    wanted = worker_cores()
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)
    return wanted


def pick_device(device: str | None = None) -> str:
    """``device`` if given, else ``"cuda"`` when a GPU is visible, else ``"cpu"`` (then on every worker core)."""
    import torch

    if device in (None, "", "auto"):
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif str(device).startswith("cuda") and not torch.cuda.is_available():
        raise ScorerError(f"device {device!r} requested but CUDA is not available; use device='cpu' or leave it unset")
    if str(device) == "cpu":
        use_worker_cores()
    return str(device)


def pick_dtype(device: str, dtype: str | None = "auto") -> Any:
    """The torch dtype: float32 on CPU, bfloat16 (or float16 without bf16 support) on CUDA, unless forced."""
    import torch

    names = {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16, "fp16": torch.float16,
             "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}
    if dtype in (None, "", "auto"):
        if not device.startswith("cuda"):
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if dtype not in names:
        raise ScorerError(f"unknown dtype {dtype!r}; use one of auto, {', '.join(names)}")
    return names[dtype]


def input_limit(tokenizer: Any, config: Any, default: int = 512) -> int:
    """The longest input (in tokens, special tokens included) the model accepts.

    The smaller of the tokenizer's ``model_max_length`` and the model's position table size (when the
    model has one); ``default`` when neither is known.
    """
    candidates = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < _NO_LIMIT:
        candidates.append(tok_max)
    for attr in ("max_position_embeddings", "n_positions"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            # RoBERTa-style models offset positions by padding_idx + 1.
            if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert", "longformer"}:
                value -= getattr(config, "pad_token_id", 1) + 1
            candidates.append(value)
            break
    return min(candidates) if candidates else default


def batches(order: Sequence[int], size: int) -> Iterator[list[int]]:
    """Consecutive chunks of ``order`` of at most ``size`` items."""
    if size < 1:
        raise ValueError(f"batch_size must be at least 1, got {size}")
    for start in range(0, len(order), size):
        yield list(order[start : start + size])
