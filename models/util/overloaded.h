// overloaded{lambdas...}: one visitor from lambdas for std::visit. Give one
// lambda per alternative (no `auto` catch-all) and a new alternative fails
// to compile until every visit handles it.
#pragma once

namespace kb {

template <class... Ts>
struct overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;

}  // namespace kb
