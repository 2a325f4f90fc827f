//===- MuonBase.td - The muon dialect ----------------------*- tablegen -*-===//
//
// The distributed Muon optimizer step and the pieces it expands into.
//
//===----------------------------------------------------------------------===//

#ifndef MUON_DIALECT_MUON_IR_MUONBASE_TD
#define MUON_DIALECT_MUON_IR_MUONBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Muon_Dialect : Dialect {
  let name = "muon";
  let cppNamespace = "::muon::optim";
  let summary = "The distributed Muon optimizer step";
  let description = [{
    * `muon.step` takes parameters, gradients and momentum buffers as
      `!dist.tensor`s and returns the new parameters and momentum buffers.
    * `muon-assign-owners` gives every parameter one owner rank;
      `muon-expand-step` rewrites the step into SPMD code on local tensors:
      `muon.momentum_update`, rooted `dist.gather`s to the owner,
      `muon.newton_schulz` on the owner only, `dist.scatter` /
      `dist.broadcast` back, `muon.apply_update`.

    See docs/muon-dialect.md for the exact semantics.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::muon::dist::DistDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect"
  ];
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Muon_Op<string mnemonic, list<Trait> traits = []>
    : Op<Muon_Dialect, mnemonic, traits>;

class Muon_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Muon_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Muon_LrAdjust : I32EnumAttr<"LrAdjust", "learning-rate adjustment", [
  I32EnumAttrCase<"Original", 0, "original">,
  I32EnumAttrCase<"MatchRmsAdamW", 1, "match_rms_adamw">,
  I32EnumAttrCase<"SpectralUnclamped", 2, "spectral_unclamped">]> {
  let cppNamespace = "::muon::optim";
  let genSpecializedAttr = 0;
}
def Muon_LrAdjustAttr : EnumAttr<Muon_Dialect, Muon_LrAdjust, "lr_adjust"> {
  let assemblyFormat = "`<` $value `>`";
}

def Muon_MomentumForm : I32EnumAttr<"MomentumForm", "momentum update form", [
  I32EnumAttrCase<"Lerp", 0, "lerp">,
  I32EnumAttrCase<"Sum", 1, "sum">]> {
  let cppNamespace = "::muon::optim";
  let genSpecializedAttr = 0;
}
def Muon_MomentumFormAttr
    : EnumAttr<Muon_Dialect, Muon_MomentumForm, "momentum_form"> {
  let assemblyFormat = "`<` $value `>`";
}

def Muon_Strategy : I32EnumAttr<"Strategy", "owner assignment strategy", [
  I32EnumAttrCase<"RoundRobin", 0, "round_robin">,
  I32EnumAttrCase<"Balanced", 1, "balanced">,
  I32EnumAttrCase<"Explicit", 2, "explicit">]> {
  let cppNamespace = "::muon::optim";
  let genSpecializedAttr = 0;
}
def Muon_StrategyAttr : EnumAttr<Muon_Dialect, Muon_Strategy, "strategy"> {
  let assemblyFormat = "`<` $value `>`";
}

def Muon_LocalKind : I32EnumAttr<"LocalKind", "where a parameter lives", [
  I32EnumAttrCase<"Global", 0, "global">,
  I32EnumAttrCase<"Expert", 1, "expert">,
  I32EnumAttrCase<"Stage", 2, "stage">]> {
  let cppNamespace = "::muon::optim";
  let genSpecializedAttr = 0;
}

#endif // MUON_DIALECT_MUON_IR_MUONBASE_TD
