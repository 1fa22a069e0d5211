/**
 * Stand-ins for the upstream LLM providers: loopback servers that speak each vendor's
 * documented bytes. Start one with `startMockUpstream(protocol)`, or all four with
 * `startAllMockUpstreams()`, and point Switchyard at them with `catalogFor(mocks)`.
 * Scenario selection by model id ("gpt-4o-mini@tool_call"): see scenario-from-model.ts.
 */
export type {
  MockScenario,
  MockScenarioKind,
  MockUpstream,
  MockUsage,
  RecordedRequest,
  StartMockUpstreamOptions,
  UpstreamProtocol,
} from "./mock-types";
export { startMockUpstream } from "./start-mock-upstream";
export { startAllMockUpstreams, type MockUpstreamSet } from "./start-all-mock-upstreams";
export {
  CATALOG_SCENARIO_SUFFIXES,
  MOCK_PROVIDERS,
  MULTI_MODEL_ID,
  MULTI_MODEL_PRICING,
  catalogFor,
  mockProviderEnv,
  type Catalog,
  type CatalogEndpoint,
  type CatalogForOptions,
  type CatalogModel,
  type CatalogPricing,
  type CatalogProvider,
} from "./catalog-for";
export { scenarioFromModel, type ModelSelector } from "./scenario-from-model";
export {
  DEFAULT_SECOND_TOOL_ARGS,
  DEFAULT_TEXT,
  DEFAULT_TOOL_ARGS,
  DEFAULT_TOOL_NAME,
  REASONING_TEXT,
} from "./resolve-scenario";
