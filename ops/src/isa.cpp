// Run-time ISA detection and selection.
#include "attend/ops/isa.hpp"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "attend/error.hpp"
#include "kernel_table.hpp"

namespace attend::ops {
namespace {

// __builtin_cpu_supports checks CPUID and that the OS saves the wider registers
// (XGETBV: libgcc reports no AVX-512 feature at all unless XCR0 enables the opmask and
// zmm state), which a bare CPUID probe would miss. The two dot-product extensions are
// CPUID.(EAX=7,ECX=0):ECX bit 11 (AVX512_VNNI) and CPUID.(EAX=7,ECX=1):EAX bit 5
// (AVX512_BF16).
// AMX: CPUID.(EAX=7,ECX=0):EDX bits 24 (AMX-TILE) and 25 (AMX-INT8); the OS saving the
// tile state (CPUID.1:ECX.OSXSAVE, then XCR0 bits 17 and 18); and Linux's permission for
// this process to use the 8 KiB tile data (arch_prctl ARCH_REQ_XCOMP_PERM, Linux ≥ 5.16:
// a tile instruction without it is a SIGILL). Asked once, for the whole process; a
// refusal (an older kernel, or a signal stack too small for the larger frame) leaves
// the VNNI level as the best.
bool amx_usable() {
  static const bool usable = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0 || (ecx >> 27 & 1u) == 0) return false;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
    if ((edx >> 24 & 1u) == 0 || (edx >> 25 & 1u) == 0) return false;
    std::uint32_t xcr0_low = 0, xcr0_high = 0;
    __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    if ((xcr0_low >> 17 & 3u) != 3u) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

bool cpu_has(Isa isa) {
  __builtin_cpu_init();
  switch (isa) {
    case Isa::sse2:
      return true;  // part of x86-64
    case Isa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma");
    case Isa::avx512_vnni:
      return cpu_has(Isa::avx512) && __builtin_cpu_supports("avx512vnni");
    case Isa::avx512_bf16:  // a level above VNNI: every CPU with AVX512_BF16 has VNNI too
      return cpu_has(Isa::avx512_vnni) && __builtin_cpu_supports("avx512bf16");
    case Isa::avx512_amx:  // every CPU with AMX has AVX512_BF16 (Sapphire Rapids on)
      return cpu_has(Isa::avx512_bf16) && amx_usable();
  }
  return false;
}

// Every level, best first.
constexpr Isa kAllIsas[] = {Isa::avx512_amx, Isa::avx512_bf16, Isa::avx512_vnni, Isa::avx512, Isa::avx2, Isa::sse2};

constexpr int kUnset = -1;
std::atomic<int> g_active{kUnset};
thread_local int tls_scope = kUnset;  // the innermost IsaScope's ISA on this thread

Isa initial_isa() {
  const Isa best = available_isas().front();
  const char* env = std::getenv("ATTEND_ISA");
  if (env == nullptr || *env == '\0') return best;
  const Isa wanted = parse_isa(env);
  if (!isa_available(wanted)) {
    throw Error(std::string("ATTEND_ISA=") + env + " asks for an instruction set this CPU does not support (best available: " +
                isa_name(best) + ")");
  }
  return wanted;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::sse2: return "sse2";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512_vnni: return "avx512_vnni";
    case Isa::avx512_bf16: return "avx512_bf16";
    case Isa::avx512_amx: return "avx512_amx";
  }
  return "?";
}

Isa parse_isa(const std::string& name) {
  for (Isa isa : kAllIsas)
    if (name == isa_name(isa)) return isa;
  if (name == "portable") return Isa::sse2;
  throw Error("unknown instruction set '" + name +
              "' (expected avx512_amx, avx512_bf16, avx512_vnni, avx512, avx2 or sse2)");
}

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (cpu_has(isa)) out.push_back(isa);
  return out;
}

bool isa_available(Isa isa) { return cpu_has(isa); }

Isa f32_kernel_isa(Isa isa) { return isa > Isa::avx512 ? Isa::avx512 : isa; }

Isa active_isa() {
  if (tls_scope != kUnset) return static_cast<Isa>(tls_scope);
  int v = g_active.load(std::memory_order_acquire);
  if (v == kUnset) {
    const Isa chosen = initial_isa();
    int expected = kUnset;
    g_active.compare_exchange_strong(expected, static_cast<int>(chosen), std::memory_order_acq_rel);
    v = g_active.load(std::memory_order_acquire);
  }
  return static_cast<Isa>(v);
}

void set_isa(Isa isa) {
  if (!isa_available(isa)) throw Error(std::string("set_isa: this CPU cannot run ") + isa_name(isa));
  g_active.store(static_cast<int>(isa), std::memory_order_release);
}

IsaScope::IsaScope(Isa isa) : previous_(tls_scope) {
  if (!isa_available(isa)) throw Error(std::string("this CPU cannot run ") + isa_name(isa) + " kernels");
  tls_scope = static_cast<int>(isa);
}

IsaScope::~IsaScope() { tls_scope = previous_; }

std::string isa_kernel_summary(Isa isa) {
  const auto& t = detail::kernels_for(isa);
  return std::string(t.name) + ": " + t.f32.name + ", " + t.bf16.name + ", " + t.s8.name + ", attention tile " +
         std::to_string(t.attention_query_tile) + "x" + std::to_string(detail::kAttentionKeyTile);
}

namespace detail {

int thread_isa_scope() { return tls_scope; }
void set_thread_isa_scope(int isa) { tls_scope = isa; }

const KernelTable& kernels_for(Isa isa) {
  if (!isa_available(isa)) throw Error(std::string("this CPU cannot run ") + isa_name(isa) + " kernels");
  switch (isa) {
    case Isa::avx512_amx: return avx512_amx_kernels();
    case Isa::avx512_bf16: return avx512_bf16_kernels();
    case Isa::avx512_vnni: return avx512_vnni_kernels();
    case Isa::avx512: return avx512_kernels();
    case Isa::avx2: return avx2_kernels();
    case Isa::sse2: break;
  }
  return sse2_kernels();
}

const KernelTable& active_kernels() { return kernels_for(active_isa()); }

}  // namespace detail
}  // namespace attend::ops
