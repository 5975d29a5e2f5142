// Parallel work the caller splits itself: task(t) for every t in [0, threads), t = 0 on
// the calling thread and the others on its thread team (the ops' own workers), back
// when all have finished.
//
// For a caller that owns a whole sequence of ops over independent rows — the decoder's
// step over its live rows — and gives each thread a share to run with one thread per
// op: one fork and one join per sequence instead of one per op, and each thread's rows
// stay in its own core's cache from op to op.
#pragma once

#include <array>
#include <exception>
#include <vector>

namespace attend::ops {

namespace detail {
using TaskJob = void (*)(const void* context, int t);
void run_tasks(int threads, TaskJob job, const void* context);
}  // namespace detail

// A task that throws does not take the process down: the first exception (lowest t) is
// rethrown here once every task has ended. Inside another parallel region the tasks run
// one after another on the calling thread. Up to kStackTaskErrors threads it allocates
// nothing (decoding runs it on every step and promises no heap allocation).
inline constexpr int kStackTaskErrors = 64;

template <class Task>
void parallel_tasks(int threads, const Task& task) {
  if (threads <= 1) {
    task(0);
    return;
  }
  std::array<std::exception_ptr, kStackTaskErrors> few;
  std::vector<std::exception_ptr> many(threads > kStackTaskErrors ? static_cast<std::size_t>(threads) : 0);
  struct Context {
    const Task* task;
    std::exception_ptr* errors;
  } context{&task, threads > kStackTaskErrors ? many.data() : few.data()};
  detail::run_tasks(threads, [](const void* c, int t) {
    auto& ctx = *static_cast<Context*>(const_cast<void*>(c));
    try {
      (*ctx.task)(t);
    } catch (...) {
      ctx.errors[t] = std::current_exception();
    }
  }, &context);
  for (int t = 0; t < threads; ++t)
    if (context.errors[t]) std::rethrow_exception(context.errors[t]);
}

}  // namespace attend::ops
