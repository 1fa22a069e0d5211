import { Elysia } from "elysia";
import { parseCreateBody } from "../management/routing-presets/routing-preset-body";
import * as presets from "../management/routing-presets/routing-preset-service";
import type { ConsoleContext } from "./console-context";
import { idField, oneLineField, submittedValues, textAreaField } from "./form-input";
import { pageWithNotices, type FormState } from "./management-layout";
import { backTo, managementForm, refusableForm, type ManagementRequest } from "./management-request";
import { routingPresetsPage } from "./routing-presets-page";

const NOTICES = {
  created: "Routing preset created.",
  disabled: "Routing preset disabled: requests naming it are refused.",
  enabled: "Routing preset enabled.",
  deleted: "Routing preset deleted.",
};

/** /console/routing-presets: list, create (name, model, system prompt), disable, enable, delete. */
export function routingPresetsPageRoutes(context: ConsoleContext) {
  const { services } = context;
  const show = async (req: ManagementRequest, state: FormState) => routingPresetsPage(req, await presets.listPresets(services, req.tenant), state);

  const toggle = (purpose: string, disabled: boolean) => ({ request, body }: { request: Request; body: unknown }) =>
    managementForm(context, request, body, purpose, async (req) => {
      await presets.setDisabled(services, req.tenant, idField(body, "routing preset"), disabled);
      return backTo(req, "/console/routing-presets", disabled ? "disabled" : "enabled");
    });

  return new Elysia({ name: "console-routing-presets", normalize: false })
    .get("/console/routing-presets", pageWithNotices(context, NOTICES, show))
    .post("/console/routing-presets", ({ request, body }) =>
      refusableForm(context, request, body, "routing-presets-create", {
        async act(req) {
          const model = oneLineField(body, "model", "Model", { max: 256 });
          const systemPrompt = textAreaField(body, "system_prompt", "System prompt", 100_000);
          // The same rules, and messages, as the JSON API's.
          const input = parseCreateBody({
            name: oneLineField(body, "name", "Name", { max: 64, required: true }),
            model: model === "" ? null : model,
            system_prompt: systemPrompt.trim() === "" ? null : systemPrompt,
          });
          await presets.createPreset(services, req.tenant, input.name, input.spec);
          return backTo(req, "/console/routing-presets", "created");
        },
        showAgain: (req, message, status) => show(req, { error: message, status, values: submittedValues(body) }),
      }),
    )
    .post("/console/routing-presets/disable", toggle("routing-presets-disable", true))
    .post("/console/routing-presets/enable", toggle("routing-presets-enable", false))
    .post("/console/routing-presets/delete", ({ request, body }) =>
      managementForm(context, request, body, "routing-presets-delete", async (req) => {
        await presets.removePreset(services, req.tenant, idField(body, "routing preset"));
        return backTo(req, "/console/routing-presets", "deleted");
      }),
    );
}
