import { roundCpu } from "../diff/cpu.js";

/** True when the value has more than one decimal place as written, so the control plane rounds it. */
export const needsCpuRounding = (value: number): boolean => roundCpu(value) !== value;
