// Everything attend's compute core offers, in one include.
#pragma once

#include "attend/ops/activation.hpp"
#include "attend/ops/aligned_buffer.hpp"
#include "attend/ops/argmax.hpp"
#include "attend/ops/attention.hpp"
#include "attend/ops/bf16.hpp"
#include "attend/ops/cache_sizes.hpp"
#include "attend/ops/embedding.hpp"
#include "attend/ops/gemm.hpp"
#include "attend/ops/isa.hpp"
#include "attend/ops/normalization.hpp"
#include "attend/ops/parallel_tasks.hpp"
#include "attend/ops/row_magnitude.hpp"
#include "attend/ops/softmax.hpp"
#include "attend/ops/streaming_stores.hpp"
#include "attend/ops/types.hpp"
