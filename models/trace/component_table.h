// The PE's components and engines, in one table: the op
// log, statistics, the VCD, the Chrome trace, the report and the benches loop
// over it, and PE_SCHEDULER indexes its engines by Engine. Adding an engine
// adds a Component, an Engine and one row to each table below.
//
// It lives at the bottom of the model (plain data, no includes from
// models/pe) so that models/trace can loop over it without including upward.
#pragma once

#include <cstdint>

namespace kb {

// Every op-log record names one component; the order is the op log's, the
// statistics' and the Chrome trace's track order.
enum class Component : uint8_t { kPeCpu, kPeScheduler, kPeDma, kPeGemm, kPeMath, kPeTcm, kPeIpc };
constexpr int kNumComponents = 7;

// PE_SCHEDULER's engines: each runs one stage at a time.
enum class Engine : uint8_t { kDma, kGemm, kMath, kTcm, kIpc };
constexpr int kNumEngines = 5;

struct ComponentInfo {
  Component component;
  const char* name;  // module instance name; op log, statistics, report, Chrome trace track
  // Has busy time from op-log records (statistics, report, a Chrome trace
  // track); PE_SCHEDULER has none: it is traced as its queue occupancy.
  bool busy;
  // Listed (statistics, reports, result JSON, Chrome trace, VCD, benches)
  // only where it ran a stage: PE_IPC, so single-PE
  // outputs stay byte-identical.
  bool optional;
};

constexpr ComponentInfo kComponents[kNumComponents] = {
    {Component::kPeCpu, "pe_cpu", true, false},
    {Component::kPeScheduler, "pe_scheduler", false, false},
    {Component::kPeDma, "pe_dma", true, false},
    {Component::kPeGemm, "pe_gemm", true, false},
    {Component::kPeMath, "pe_math", true, false},
    {Component::kPeTcm, "pe_tcm", true, false},
    {Component::kPeIpc, "pe_ipc", true, true},
};

struct EngineInfo {
  Engine engine;
  Component component;  // the engine's module (its name is the component's)
  // PE_SCHEDULER's socket to the engine; the VCD signal "busy_<port>".
  const char* port;
};

// The order is the busiest-engine tie order of the statistics' verdict.
constexpr EngineInfo kEngines[kNumEngines] = {
    {Engine::kDma, Component::kPeDma, "dma"},
    {Engine::kGemm, Component::kPeGemm, "gemm"},
    {Engine::kMath, Component::kPeMath, "math"},
    {Engine::kTcm, Component::kPeTcm, "tcm"},
    {Engine::kIpc, Component::kPeIpc, "ipc"},
};

// What an op-log record is: each kind is made by one component, whose
// optional flag it shares (statistics list an optional kind only where a run
// has one).
enum class RecordKind : uint8_t {
  kDispatch,   // PE_CPU: dispatch_cycles charged before a descriptor write
  kStall,      // PE_CPU: descriptor write held back by a full queue
  kCpuCycles,  // PE_CPU: tl.cycles(n)
  kDmaRead,    // HBM -> TCM
  kDmaWrite,   // TCM -> HBM
  kCopy,       // TCM -> TCM
  kFetch,      // TCM -> engine (composite tile plan)
  kStore,      // engine -> TCM (composite tile plan)
  kGemm,
  kMath,
  kSend,  // PE_IPC: a message out
  kRecv,  // PE_IPC: a message taken from the receive queue
};

struct RecordKindInfo {
  RecordKind kind;
  const char* name;  // op log, statistics, Chrome trace slice names
  Component component;
};

constexpr RecordKindInfo kRecordKinds[] = {
    {RecordKind::kDispatch, "DISPATCH", Component::kPeCpu},
    {RecordKind::kStall, "STALL", Component::kPeCpu},
    {RecordKind::kCpuCycles, "CPU_CYCLES", Component::kPeCpu},
    {RecordKind::kDmaRead, "DMA_READ", Component::kPeDma},
    {RecordKind::kDmaWrite, "DMA_WRITE", Component::kPeDma},
    {RecordKind::kCopy, "COPY", Component::kPeDma},
    {RecordKind::kFetch, "FETCH", Component::kPeTcm},
    {RecordKind::kStore, "STORE", Component::kPeTcm},
    {RecordKind::kGemm, "GEMM", Component::kPeGemm},
    {RecordKind::kMath, "MATH", Component::kPeMath},
    {RecordKind::kSend, "SEND", Component::kPeIpc},
    {RecordKind::kRecv, "RECV", Component::kPeIpc},
};
constexpr int kNumRecordKinds = int(sizeof(kRecordKinds) / sizeof(kRecordKinds[0]));

constexpr const char* to_string(Component c) { return kComponents[int(c)].name; }
constexpr const char* to_string(RecordKind k) {
  return int(k) < kNumRecordKinds ? kRecordKinds[int(k)].name : "?";
}
constexpr Component engine_component(Engine e) { return kEngines[int(e)].component; }
constexpr bool is_optional(Component c) { return kComponents[int(c)].optional; }
constexpr bool is_optional(Engine e) { return is_optional(engine_component(e)); }
constexpr bool is_optional(RecordKind k) { return is_optional(kRecordKinds[int(k)].component); }
constexpr bool is_engine(Component c) {
  for (const EngineInfo& e : kEngines)
    if (e.component == c) return true;
  return false;
}

// Each row sits at its enumerator's index, so lookups are plain indexing.
constexpr bool component_table_in_order() {
  for (int c = 0; c < kNumComponents; ++c)
    if (int(kComponents[c].component) != c) return false;
  for (int e = 0; e < kNumEngines; ++e)
    if (int(kEngines[e].engine) != e || !kComponents[int(kEngines[e].component)].busy) return false;
  for (int k = 0; k < kNumRecordKinds; ++k)
    if (int(kRecordKinds[k].kind) != k) return false;
  return true;
}
static_assert(component_table_in_order(), "kComponents / kEngines / kRecordKinds: one row per enumerator, in order");

}  // namespace kb
