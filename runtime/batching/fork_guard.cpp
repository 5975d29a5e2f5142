#include "batching/fork_guard.hpp"

#include <pthread.h>

#include <atomic>

namespace attend::runtime {

// Every live ForkSafeMutex, in a list whose own mutex fork holds from before the
// fork until after it, so that no mutex is made or destroyed meanwhile.
struct ForkRegistry {
  std::mutex mutex;
  ForkSafeMutex* first = nullptr;
  std::atomic<std::uint64_t> generation{0};

  static ForkRegistry& get() {
    // Never destroyed: a mutex in a static object may outlive the registry otherwise.
    static ForkRegistry* registry = [] {
      auto* r = new ForkRegistry;
      ::pthread_atfork(&ForkRegistry::prepare, &ForkRegistry::parent, &ForkRegistry::child);
      return r;
    }();
    return *registry;
  }

  void add(ForkSafeMutex* m) {
    std::lock_guard<std::mutex> lock(mutex);
    m->next_ = first;
    if (first != nullptr) first->previous_ = m;
    first = m;
  }

  void remove(ForkSafeMutex* m) {
    std::lock_guard<std::mutex> lock(mutex);
    (m->previous_ != nullptr ? m->previous_->next_ : first) = m->next_;
    if (m->next_ != nullptr) m->next_->previous_ = m->previous_;
  }

  // Waits for every other thread to leave the state the mutexes guard.
  static void prepare() {
    ForkRegistry& r = get();
    r.mutex.lock();
    for (ForkSafeMutex* m = r.first; m != nullptr; m = m->next_) m->mutex_.lock();
  }

  static void release_all() {
    ForkRegistry& r = get();
    for (ForkSafeMutex* m = r.first; m != nullptr; m = m->next_) m->mutex_.unlock();
    r.mutex.unlock();
  }

  static void parent() { release_all(); }

  // The forking thread, now the child's only one, holds every mutex: it lets them go.
  static void child() {
    get().generation.fetch_add(1, std::memory_order_relaxed);
    release_all();
  }
};

std::uint64_t fork_generation() { return ForkRegistry::get().generation.load(std::memory_order_relaxed); }

ForkSafeMutex::ForkSafeMutex() { ForkRegistry::get().add(this); }
ForkSafeMutex::~ForkSafeMutex() { ForkRegistry::get().remove(this); }

}  // namespace attend::runtime
