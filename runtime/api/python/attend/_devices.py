"""What runs where, as CTranslate2's module-level functions say it: the CPU is the one
device, its compute types by CTranslate2's names, no CUDA device."""

from __future__ import annotations

from typing import Dict, Set, Union

from . import _attend

# attend's name of what runs (ModelInfo.compute_type) → CTranslate2's: int8 GEMMs with
# float32 between them is what CTranslate2 calls int8_float32 on CPUs.
_CTRANSLATE2_NAMES = {"int8": "int8_float32", "float32": "float32", "bfloat16": "bfloat16"}


def ctranslate2_compute_type(attend_name: str) -> str:
    """CTranslate2's name for the compute type attend reports."""
    return _CTRANSLATE2_NAMES.get(attend_name, attend_name)


def compute_type_for_cpu(where: str, compute_type: Union[str, Dict[str, str]]) -> str:
    """The compute type asked for the CPU: a name, or CTranslate2's dictionary by device
    name. A wrong type is a TypeError (CTranslate2's bindings: "incompatible constructor
    arguments"); a dictionary without "cpu" a ValueError."""
    if isinstance(compute_type, dict):
        if "cpu" not in compute_type:
            raise ValueError(f"{where}: compute_type={compute_type!r} has no entry for 'cpu' (the device attend runs on)")
        compute_type = compute_type["cpu"]
        if not isinstance(compute_type, str):
            raise TypeError(f"{where}: compute_type['cpu'] must be a string, not {type(compute_type).__name__} "
                            "(incompatible constructor arguments)")
        return compute_type
    if not isinstance(compute_type, str):
        raise TypeError(f"{where}: compute_type must be a string or a dictionary by device, not "
                        f"{type(compute_type).__name__} (incompatible constructor arguments)")
    return compute_type


def get_supported_compute_types(device: str = "cpu", device_index: int = 0) -> Set[str]:
    """The compute types the device runs natively, as
    ``ctranslate2.get_supported_compute_types``: on the CPU float32, int8, int8_float32,
    and bfloat16, int8_bfloat16 where it has AVX512_BF16."""
    if device not in ("cpu", "auto"):
        raise ValueError(f"get_supported_compute_types: device={device!r} is not supported: attend runs on the CPU")
    if device_index != 0:
        raise ValueError(f"get_supported_compute_types: device_index={device_index!r} is not a valid device index "
                         "here: the CPU is device index 0")
    return set(_attend.supported_compute_types())


def get_cuda_device_count() -> int:
    """0: attend runs on the CPU (``ctranslate2.get_cuda_device_count``)."""
    return 0


