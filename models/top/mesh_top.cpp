#include "models/top/mesh_top.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace kb {

// The parents that name the routers "mesh.router<c>" and the links
// "link.c<a>-c<b>": children are made in the parent's constructor.
struct MeshTop::Routers : sc_core::sc_module {
  std::vector<std::unique_ptr<MeshRouter>> routers;
  Routers(sc_core::sc_module_name name, uint32_t h, uint32_t w, uint32_t pes) : sc_module(name) {
    for (uint32_t c = 0; c < h * w; ++c) {
      const std::string n = "router" + std::to_string(c);
      routers.push_back(std::make_unique<MeshRouter>(n.c_str(), c, h, w, pes));
    }
  }
};

struct MeshTop::Links : sc_core::sc_module {
  struct Dir {
    uint32_t from, to;
    std::unique_ptr<UcieLink> link;
  };
  std::vector<Dir> dirs;
  Links(sc_core::sc_module_name name, uint32_t h, uint32_t w, const LinkTiming& t) : sc_module(name) {
    auto add = [&](uint32_t a, uint32_t b) {
      const std::string n = "c" + std::to_string(a) + "-c" + std::to_string(b);
      dirs.push_back({a, b, std::make_unique<UcieLink>(n.c_str(), t)});
    };
    // Each neighbouring pair once (east, then south), both directions.
    for (uint32_t c = 0; c < h * w; ++c) {
      const uint32_t x = c % w, y = c / w;
      if (x + 1 < w) {
        add(c, c + 1);
        add(c + 1, c);
      }
      if (y + 1 < h) {
        add(c, c + w);
        add(c + w, c);
      }
    }
    for (size_t i = 0; i < dirs.size(); i += 2) {  // a read's data comes back the other way
      dirs[i].link->set_reverse(dirs[i + 1].link.get());
      dirs[i + 1].link->set_reverse(dirs[i].link.get());
    }
  }
  UcieLink* find(uint32_t a, uint32_t b) {
    for (Dir& d : dirs)
      if (d.from == a && d.to == b) return d.link.get();
    return nullptr;
  }
};

MeshTop::MeshTop(const PeConfig& cfg, const LinkBinder& binder, const LinkBinder& mem_binder) {
  const TopologyConfig& t = cfg.topology;
  if (t.mesh.h == 0 || t.mesh.w == 0 || t.cube.pes == 0) {
    throw std::invalid_argument("mesh top: topology.mesh.h, topology.mesh.w and topology.cube.pes must be positive");
  }
  const uint32_t h = uint32_t(t.mesh.h), w = uint32_t(t.mesh.w), pes = uint32_t(t.cube.pes);
  for (uint32_t c = 0; c < h * w; ++c) {
    const std::string n = "cube" + std::to_string(c);
    cubes_.push_back(std::make_unique<Cube>(n.c_str(), cfg, c, binder, mem_binder));
    for (size_t i = 0; i < cubes_.back()->size(); ++i) pes_.push_back(&cubes_.back()->pe(i));
  }
  routers_ = std::make_unique<Routers>("mesh", h, w, pes);
  links_ = std::make_unique<Links>("link", h, w, link_timing(cfg));
  for (uint32_t c = 0; c < h * w; ++c) {
    MeshRouter& r = *routers_->routers[c];
    cubes_[c]->mesh_out.bind(r.in);
    r.out[size_t(r.out_index(MeshRouter::kCube))].bind(cubes_[c]->mesh_in);
    const uint32_t x = c % w, y = c / w;
    const std::pair<MeshRouter::Port, int64_t> nbrs[] = {{MeshRouter::kEast, x + 1 < w ? int64_t(c + 1) : -1},
                                                         {MeshRouter::kWest, x > 0 ? int64_t(c - 1) : -1},
                                                         {MeshRouter::kNorth, y > 0 ? int64_t(c - w) : -1},
                                                         {MeshRouter::kSouth, y + 1 < h ? int64_t(c + w) : -1}};
    for (const auto& [port, n] : nbrs) {
      if (n < 0) continue;
      UcieLink* l = links_->find(c, uint32_t(n));
      r.out[size_t(r.out_index(port))].bind(l->in);
      l->out.bind(routers_->routers[size_t(n)]->in);
    }
  }
}

MeshTop::~MeshTop() = default;

MeshRouter& MeshTop::router(size_t c) { return *routers_->routers.at(c); }
size_t MeshTop::links() const { return links_->dirs.size(); }
UcieLink& MeshTop::link(size_t i) { return *links_->dirs.at(i).link; }
UcieLink* MeshTop::link(uint32_t from_cube, uint32_t to_cube) { return links_->find(from_cube, to_cube); }

uint64_t MeshTop::data_bytes() const {
  uint64_t b = 0;
  for (const auto& c : cubes_) b += c->data_bytes();
  return b;
}

}  // namespace kb
