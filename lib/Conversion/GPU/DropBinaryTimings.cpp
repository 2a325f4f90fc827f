//===- DropBinaryTimings.cpp - gpu.binary objects without compile times --===//
//
// The NVVM target stores how long it took to compile each object in the
// object's properties. Those numbers change from run to run; a module that
// carries them is not the same text twice, which defeats any cache or
// comparison keyed by the lowered module (muon-run's compile-once object).
//
//===----------------------------------------------------------------------===//

#include "muon/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace muon {
#define GEN_PASS_DEF_MUONDROPBINARYTIMINGS
#include "muon/Conversion/Passes.h.inc"
} // namespace muon

using namespace mlir;

namespace {

/// The properties gpu-module-to-binary's NVVM target records per object.
constexpr llvm::StringLiteral kTimings[] = {"LLVMIRToISATimeInMs",
                                            "ISAToBinaryTimeInMs"};

/// `object` without the timing properties; the object itself when it has
/// none.
Attribute withoutTimings(Attribute attr) {
  auto object = dyn_cast<gpu::ObjectAttr>(attr);
  DictionaryAttr properties = object ? object.getProperties() : nullptr;
  if (!properties)
    return attr;
  SmallVector<NamedAttribute> kept;
  for (NamedAttribute p : properties)
    if (!llvm::is_contained(kTimings, p.getName().getValue()))
      kept.push_back(p);
  if (kept.size() == properties.size())
    return attr;
  DictionaryAttr rest = kept.empty()
                            ? DictionaryAttr()
                            : DictionaryAttr::get(object.getContext(), kept);
  return gpu::ObjectAttr::get(object.getContext(), object.getTarget(),
                              object.getFormat(), object.getObject(), rest,
                              object.getKernels());
}

struct MuonDropBinaryTimings
    : muon::impl::MuonDropBinaryTimingsBase<MuonDropBinaryTimings> {
  void runOnOperation() override {
    getOperation().walk([](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (Attribute object : binary.getObjectsAttr())
        objects.push_back(withoutTimings(object));
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};

} // namespace
