import type { Command } from "../command";
import { balanceCommand } from "./balance";
import { byokDeleteCommand, byokListCommand, byokSetCommand } from "./byok";
import { keysCreateCommand, keysListCommand, keysRevokeCommand } from "./keys";
import { loginCommand } from "./login";
import { logoutCommand } from "./logout";
import { modelsCommand } from "./models";
import { policiesListCommand } from "./policies";
import { policyStatusCommand } from "./policy-status";
import { policyPresetsListCommand } from "./policy-presets";
import { requestsCommand } from "./requests";
import { usageCommand } from "./usage";
import { whoamiCommand } from "./whoami";

/** Every command, in the order help lists them. */
export const COMMANDS: Command[] = [
  loginCommand,
  logoutCommand,
  whoamiCommand,
  keysListCommand,
  keysCreateCommand,
  keysRevokeCommand,
  usageCommand,
  requestsCommand,
  balanceCommand,
  modelsCommand,
  byokSetCommand,
  byokListCommand,
  byokDeleteCommand,
  policiesListCommand,
  policyStatusCommand,
  policyPresetsListCommand,
];
