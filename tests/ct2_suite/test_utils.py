import os
import platform
import sys

import numpy as np
import pytest

import ctranslate2


def get_data_dir():
    # attend: CTranslate2's tests/data layout, made by conftest.py from attend's copy of
    # the same model (no download: the tests run here need only the v2 model).
    return os.environ["ATTEND_CT2_SUITE_DATA"]


def write_tokens(batch_tokens, path):
    with open(path, "w", encoding="utf-8") as f:
        for tokens in batch_tokens:
            f.write(" ".join(tokens))
            f.write("\n")


def array_equal(a, b):
    return a.dtype == b.dtype and np.array_equal(a, b)


skip_on_windows = pytest.mark.skipif(
    sys.platform == "win32", reason="Test case disabled on Windows"
)

only_on_linux = pytest.mark.skipif(
    sys.platform != "linux", reason="Test case only running on Linux"
)

only_on_linux_and_intel = pytest.mark.skipif(
    sys.platform != "linux" or "Intel" not in platform.processor(),
    reason="Test case only running on Linux with Intel CPU",
)

require_cuda = pytest.mark.skipif(
    ctranslate2.get_cuda_device_count() == 0, reason="Test case requires a CUDA device"
)

on_available_devices = pytest.mark.parametrize(
    "device", ["cpu"] + (["cuda"] if ctranslate2.get_cuda_device_count() > 0 else [])
)
