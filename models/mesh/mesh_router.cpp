#include "models/mesh/mesh_router.h"

#include "models/mem/address_map.h"

namespace kb {

namespace {

bool has(MeshRouter::Port p, uint32_t cube, uint32_t h, uint32_t w) {
  const uint32_t x = cube % w, y = cube / w;
  switch (p) {
    case MeshRouter::kCube: return true;
    case MeshRouter::kEast: return x + 1 < w;
    case MeshRouter::kWest: return x > 0;
    case MeshRouter::kNorth: return y > 0;
    case MeshRouter::kSouth: return y + 1 < h;
  }
  return false;
}

std::vector<Router::Region> ports(uint32_t cube, uint32_t h, uint32_t w) {
  std::vector<Router::Region> r;
  for (int p = MeshRouter::kCube; p <= MeshRouter::kSouth; ++p) {
    if (has(MeshRouter::Port(p), cube, h, w)) r.push_back({MeshRouter::port_name(MeshRouter::Port(p)), {}});
  }
  return r;
}

}  // namespace

std::vector<uint32_t> xy_route(uint32_t from_cube, uint32_t to_cube, uint32_t h, uint32_t w) {
  (void)h;
  std::vector<uint32_t> path{from_cube};
  uint32_t x = from_cube % w, y = from_cube / w;
  const uint32_t tx = to_cube % w, ty = to_cube / w;
  while (x != tx) {
    x = x < tx ? x + 1 : x - 1;
    path.push_back(y * w + x);
  }
  while (y != ty) {
    y = y < ty ? y + 1 : y - 1;
    path.push_back(y * w + x);
  }
  return path;
}

const char* MeshRouter::port_name(Port p) {
  switch (p) {
    case kCube: return "cube";
    case kEast: return "east";
    case kWest: return "west";
    case kNorth: return "north";
    case kSouth: return "south";
  }
  return "?";
}

MeshRouter::MeshRouter(sc_core::sc_module_name name, uint32_t cube, uint32_t mesh_h, uint32_t mesh_w,
                       uint32_t pes_per_cube)
    : Router(name, ports(cube, mesh_h, mesh_w)), cube_(cube), h_(mesh_h), w_(mesh_w), pes_(pes_per_cube) {
  int next = 0;
  for (int p = kCube; p <= kSouth; ++p) index_[p] = has(Port(p), cube, mesh_h, mesh_w) ? next++ : -1;
}

int64_t MeshRouter::cube_of(uint64_t a) const {
  uint64_t pe;
  if (a >= kHbmBase) pe = hbm_slice_of(a);
  else if (a >= kIpcWindowBase && a < kTcmWindowBase) pe = ipc_window_of(a);
  else return -1;
  const uint64_t c = pe / pes_;
  return c < uint64_t(h_) * w_ ? int64_t(c) : -1;
}

int MeshRouter::route(const tlm::tlm_generic_payload& p) const {
  const int64_t to = cube_of(p.get_address());
  if (to < 0) return -1;
  // The whole access (a streaming burst: its first streaming width) must lie
  // in one slice or IPC window: one crossing into the next would go back to
  // its own cube's default route and round again.
  const unsigned w = p.get_streaming_width();
  const uint64_t n = w && w < p.get_data_length() ? w : p.get_data_length();
  const uint64_t a = p.get_address();
  if (n == 0 || a + (n - 1) < a) return -1;
  const uint64_t last = a + (n - 1);
  const bool hbm = a >= kHbmBase;
  if (hbm ? hbm_slice_of(last) != hbm_slice_of(a) : ipc_window_of(last) != ipc_window_of(a)) return -1;
  if (uint32_t(to) == cube_) return index_[kCube];
  const uint32_t x = cube_ % w_, y = cube_ / w_;
  const uint32_t tx = uint32_t(to) % w_, ty = uint32_t(to) / w_;
  if (tx != x) return index_[tx > x ? kEast : kWest];
  return index_[ty > y ? kSouth : kNorth];
}

}  // namespace kb
