// muon-drop-binary-timings removes the compile times gpu-module-to-binary
// records in each object's properties, keeps every other property, and
// leaves an object with nothing else without properties.
// RUN: muon-opt %s --muon-drop-binary-timings | FileCheck %s

// CHECK-LABEL: gpu.binary @timed
// CHECK-SAME: [#gpu.object<#nvvm.target, "A">,
// CHECK-SAME: #gpu.object<#nvvm.target<chip = "sm_80">, properties = {kept = 7 : i64}, "B">]
gpu.binary @timed [
  #gpu.object<#nvvm.target, properties = {ISAToBinaryTimeInMs = 48 : i64, LLVMIRToISATimeInMs = 23 : i64}, "A">,
  #gpu.object<#nvvm.target<chip = "sm_80">, properties = {ISAToBinaryTimeInMs = 5 : i64, kept = 7 : i64}, "B">
]

// CHECK-LABEL: gpu.binary @untimed
// CHECK-SAME: [#gpu.object<#nvvm.target, properties = {other = "x"}, "C">, #gpu.object<#nvvm.target, "D">]
gpu.binary @untimed [
  #gpu.object<#nvvm.target, properties = {other = "x"}, "C">,
  #gpu.object<#nvvm.target, "D">
]
