"""attend: encoder-decoder transformer inference on x86 CPUs.

A drop-in for CTranslate2's ``Translator`` — a CTranslate2 user changes one import::

    import attend
    translator = attend.Translator("ende_ct2/", device="cpu", intra_threads=2)
    results = translator.translate_batch([["▁Hello", "▁world", "."]], beam_size=4, return_scores=True)
    print(results[0].hypotheses[0], results[0].scores[0])

with CTranslate2's module functions too (``set_random_seed``, ``set_log_level``,
``get_supported_compute_types``, ``contains_model``…), plus attend's own:
:meth:`Translator.translate_text` (SentencePiece text in and out),
:func:`attend.serve` (``python -m attend serve``: an HTTP server with OpenAI-, TEI- and
LibreTranslate-compatible routes and dynamic batching),
``attend.Model.preset("base")`` (random weights in a standard shape),
:meth:`Translator.info`, :meth:`Translator.plan` and profiling. ``attend.ray`` (with
``pip install .[ray]``) translates a corpus across the machines of a Ray cluster.

The engine is the C++ library libattend, bound in ``attend._attend``: every call that
translates releases the GIL, so Python threads sharing a translator run in parallel.
"""

from ._attend import (  # noqa: F401  (re-exported)
    AttentionHeads,
    Hypothesis,
    Model,
    ModelInfo,
    ServedModel,
    ServerOptions,
    SpecialIds,
    StepProfile,
    TensorInfo,
    TokenStep,
    TranslationOptions,
    TranslatorOptions,
    convert_model,
    reads_in_place,
    version,
)
from .results import (  # noqa: F401
    AsyncScoringResult,
    AsyncTranslationResult,
    ExecutionStats,
    GenerationStepResult,
    ScoringResult,
    TranslationResult,
)
from .translator import Translator, set_random_seed  # noqa: F401
from ._devices import get_cuda_device_count, get_supported_compute_types  # noqa: F401  (CTranslate2's functions)
from ._logging import get_log_level, set_log_level  # noqa: F401
from ._model_files import contains_model  # noqa: F401
from .encoder import Encoder, EncoderForwardOutput, SentenceEncoder  # noqa: F401  (encoder-only models)
from .server import Server, serve, served_model  # noqa: F401  (the HTTP server)

__version__: str = version()

__all__ = [
    "AsyncScoringResult",
    "AttentionHeads",
    "AsyncTranslationResult",
    "ExecutionStats",
    "GenerationStepResult",
    "Hypothesis",
    "Model",
    "ModelInfo",
    "ScoringResult",
    "SpecialIds",
    "StepProfile",
    "TensorInfo",
    "TokenStep",
    "TranslationOptions",
    "TranslationResult",
    "Translator",
    "TranslatorOptions",
    "contains_model",
    "convert_model",
    "get_cuda_device_count",
    "get_log_level",
    "get_supported_compute_types",
    "Encoder",
    "EncoderForwardOutput",
    "SentenceEncoder",
    "ServedModel",
    "Server",
    "ServerOptions",
    "serve",
    "served_model",
    "reads_in_place",
    "set_log_level",
    "set_random_seed",
    "version",
    "__version__",
]
