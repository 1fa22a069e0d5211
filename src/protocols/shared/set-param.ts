import type { IrGenerationParams } from "../../ir";

/** Sets a generation parameter the body gave; one it left out stays absent (unknown is not zero). */
export function setParam<K extends keyof IrGenerationParams>(params: IrGenerationParams, key: K, value: IrGenerationParams[K] | undefined): void {
  if (value !== undefined) params[key] = value;
}
