"""A minimal safetensors writer (F32 only) so the converters need no extra package."""
import json
import struct

import numpy as np


def write(path, tensors, metadata=None):
    """tensors: ordered {name: numpy array}; written as F32 in that order."""
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    header["__metadata__"] = dict(metadata or {"format": "pt", "written_by": "attend"})
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((64 - (8 + len(text)) % 64) % 64)  # data section 64-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
