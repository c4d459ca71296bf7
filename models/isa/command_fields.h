// A command's fixed fields as data: each command struct in commands.h lists
// its fields once (`static constexpr auto fields()`), and the generic code
// loops over the list: logical bytes, the descriptor's layout, handle
// access, the table checks, the replay text and handle remapping
// (docs/extending.md, "A new command"). A field's member type says its
// size and encoding (docs/cost-model.md D2):
//
//   Handle (uint64_t)  a tensor handle        8 bytes
//   uint32_t           a peer (a PE number)   4 bytes
//   int64_t            a scalar               4 bytes, int32 on the wire
//   bool               a flag                 1 byte, 0 or 1
//
// Plain C++, no SystemC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace kb {

// A tensor handle is its address; shape and dtype live in the descriptor
// table (TensorTable), as docs/cost-model.md D2 assumes.
using Handle = uint64_t;

// Which FIXED a command pays (docs/cost-model.md D8; D5 for none).
enum class FixedClass : uint8_t { kSingleOp, kComposite, kNone };

// How a command uses a tensor handle field (hazards, initialisation).
enum class Access : uint8_t { kRead, kWrite };
// Where a handle field's tensor must live.
enum class SpaceRule : uint8_t { kAny, kHbm, kTcm };
// What the table check asks of a command's tensors beyond each one existing
// in its space: kTransfer, that the written and the read tensor have one
// shape and dtype (a copy).
enum class CheckRule : uint8_t { kLookUp, kTransfer };

template <class C, class M>
struct Field {
  M C::*member;
  const char* key;   // replay text (key=value; a flag is the bare key) and messages
  const char* what;  // what a descriptor message calls it ("ends inside WHAT")
  Access access;     // handles only
  SpaceRule space;   // handles only
};

// The field makers, one per member type.
template <class C>
constexpr Field<C, Handle> tensor_field(Handle C::*m, const char* key, Access a, SpaceRule s = SpaceRule::kAny) {
  return {m, key, key, a, s};
}
template <class C>
constexpr Field<C, uint32_t> peer_field(uint32_t C::*m, const char* key, const char* what) {
  return {m, key, what, Access::kRead, SpaceRule::kAny};
}
template <class C>
constexpr Field<C, int64_t> scalar_field(int64_t C::*m, const char* key) {
  return {m, key, key, Access::kRead, SpaceRule::kAny};
}
template <class C>
constexpr Field<C, bool> flag_field(bool C::*m, const char* key) {
  return {m, key, key, Access::kRead, SpaceRule::kAny};
}

// docs/cost-model.md D2 sizes by member type.
template <class M>
constexpr uint32_t field_bytes() {
  if constexpr (std::is_same_v<M, Handle>) return 8;
  else if constexpr (std::is_same_v<M, uint32_t> || std::is_same_v<M, int64_t>) return 4;
  else if constexpr (std::is_same_v<M, bool>) return 1;
  else static_assert(sizeof(M) == 0, "command_fields.h: a field is a Handle, uint32_t, int64_t or bool");
}

// True for a command that lists its fields (every command but MathCmd,
// CompositeCmd and CpuOverheadCmd, whose layouts are variable).
template <class T, class = void>
struct has_fields : std::false_type {};
template <class T>
struct has_fields<T, std::void_t<decltype(T::fields())>> : std::true_type {};
template <class T>
inline constexpr bool has_fields_v = has_fields<T>::value;

// f(field) for each field of C, in the listed order (the descriptor's).
template <class C, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, C::fields());
}

// The field's member type.
template <class F>
struct field_member;
template <class C, class M>
struct field_member<Field<C, M>> {
  using type = M;
};
template <class F>
using field_member_t = typename field_member<std::remove_cv_t<std::remove_reference_t<F>>>::type;

template <class C>
constexpr uint32_t fields_bytes() {
  uint32_t n = 0;
  for_each_field<C>([&](const auto& field) {
    n += field_bytes<field_member_t<decltype(field)>>();
  });
  return n;
}

}  // namespace kb
