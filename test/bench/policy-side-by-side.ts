/**
 * The governed hot key side by side across builds: for each variant (label:JSON env; a
 * SWITCHYARD_ROOT runs another checkout), the metered path with no policy and with a
 * budget, a rate limit and a guardrail bound (policy-paths.ts), in rounds that alternate
 * the variants, so a drifting machine weighs on each alike. Prints per variant the
 * governed key's rps and CPU per request against its own no-policy key.
 *
 *   VARIANTS='before:{"SWITCHYARD_ROOT":"/tmp/before"};after:{}' ROUNDS=4 bun test/bench/policy-side-by-side.ts
 */
import { cleanupAll } from "./children";
import { measurePolicyCosts, policyPaths, totalCpuUs, type PolicyCost } from "./policy-paths";
import { parseVariants, startBenchUpstreams, startDatabase, startSwitchyard } from "./switchyard-process";

const MOCK_KEY = "bench-mock-key";

const servers: Array<{ stop(): Promise<void> }> = [];

async function main(): Promise<void> {
  const rounds = Number(process.env.ROUNDS ?? 4);
  const settings = { lanes: 64, sliceMs: Number(process.env.SLICE_MS ?? 2_500), slices: 1, warmupMs: 3_000 };
  const { mocks } = await startBenchUpstreams(MOCK_KEY);
  const database = await startDatabase();
  const variants = [];
  for (const variant of parseVariants(process.env.VARIANTS ?? 'before:{"SWITCHYARD_ROOT":"/tmp/before"};after:{}')) {
    const server = await startSwitchyard({ ...variant, database, mocks, mockKey: MOCK_KEY });
    servers.push(server);
    // The plain path without and with policies (the streams are the bench's other rows).
    const paths = (await policyPaths(server.url, server.apiKey)).slice(0, 2);
    variants.push({ label: variant.mode, server, paths, sums: [] as PolicyCost[][] });
  }
  for (let round = 0; round < rounds; round++) {
    for (const variant of variants) {
      const warm = round === 0 ? settings : { ...settings, warmupMs: 0 };
      variant.sums.push(await measurePolicyCosts(variant.paths, variant.server.pid, database.postmasterPid, warm));
    }
  }
  console.log("| variant | rps: no policy → governed | governed ÷ no policy | CPU µs: no policy → governed | ÷ |");
  console.log("|---|--:|--:|--:|--:|");
  for (const variant of variants) {
    const mean = (index: number, read: (cost: PolicyCost) => number) => variant.sums.reduce((sum, costs) => sum + read(costs[index]!), 0) / variant.sums.length;
    const [rpsNone, rpsGoverned] = [mean(0, (c) => c.rps), mean(1, (c) => c.rps)];
    const [cpuNone, cpuGoverned] = [mean(0, totalCpuUs), mean(1, totalCpuUs)];
    console.log(`| ${variant.label} | ${Math.round(rpsNone)} → ${Math.round(rpsGoverned)} | ${(rpsGoverned / rpsNone).toFixed(2)}× | ${cpuNone.toFixed(1)} → ${cpuGoverned.toFixed(1)} | ${(cpuGoverned / cpuNone).toFixed(2)}× |`);
  }
}

try {
  await main();
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  cleanupAll();
}
process.exit(0);
