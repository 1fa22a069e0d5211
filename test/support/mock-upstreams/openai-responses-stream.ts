/**
 * OpenAI Responses streaming: `event: <type>` + `data: <json with type and
 * sequence_number from 0>`; no `[DONE]`.
 * https://platform.openai.com/docs/api-reference/responses-streaming
 *
 * response.created, response.in_progress, then per item in output order:
 * - reasoning: output_item.added, reasoning_summary_part.added,
 *   reasoning_summary_text.delta*, reasoning_summary_text.done,
 *   reasoning_summary_part.done, output_item.done
 * - message: output_item.added, content_part.added, output_text.delta*,
 *   output_text.done, content_part.done, output_item.done
 * - function_call: output_item.added, function_call_arguments.delta*,
 *   function_call_arguments.done, output_item.done
 * and last response.completed (response.incomplete when the output limit cut the
 * turn) carrying the full response with usage.
 */
import { mockIds } from "./mock-ids";
import { unixSeconds, type JsonObject, type MockCall } from "./mock-protocol";
import {
  completedItem,
  outputTextPart,
  responseObject,
  responsesItems,
  responseStatus,
  responsesUsage,
  type ResponsesItem,
} from "./openai-responses-items";
import type { ResolvedScenario } from "./resolve-scenario";
import { sseEvent } from "./sse-frames";
import { splitIntoFragments, splitIntoWords } from "./split-pieces";

type Emit = (type: string, fields: JsonObject) => void;

function emitItem(emit: Emit, item: ResponsesItem, outputIndex: number): void {
  const at = { item_id: item.id, output_index: outputIndex };
  switch (item.type) {
    case "reasoning": {
      emit("response.output_item.added", { output_index: outputIndex, item: { id: item.id, type: "reasoning", summary: [] } });
      const part = (text: string) => ({ type: "summary_text", text });
      emit("response.reasoning_summary_part.added", { ...at, summary_index: 0, part: part("") });
      for (const delta of splitIntoWords(item.summary)) {
        emit("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta });
      }
      emit("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: item.summary });
      emit("response.reasoning_summary_part.done", { ...at, summary_index: 0, part: part(item.summary) });
      break;
    }
    case "message": {
      const added = { id: item.id, type: "message", status: "in_progress", content: [], role: "assistant" };
      emit("response.output_item.added", { output_index: outputIndex, item: added });
      emit("response.content_part.added", { ...at, content_index: 0, part: outputTextPart("") });
      for (const delta of splitIntoWords(item.text)) {
        emit("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] });
      }
      emit("response.output_text.done", { ...at, content_index: 0, text: item.text, logprobs: [] });
      emit("response.content_part.done", { ...at, content_index: 0, part: outputTextPart(item.text) });
      break;
    }
    case "function_call": {
      const added = { id: item.id, type: "function_call", status: "in_progress", arguments: "", call_id: item.callId, name: item.name };
      emit("response.output_item.added", { output_index: outputIndex, item: added });
      for (const delta of splitIntoFragments(item.arguments)) {
        emit("response.function_call_arguments.delta", { ...at, delta });
      }
      emit("response.function_call_arguments.done", { ...at, arguments: item.arguments });
      break;
    }
  }
  emit("response.output_item.done", { output_index: outputIndex, item: completedItem(item) });
}

export function renderOpenaiResponsesStream(scenario: ResolvedScenario, call: MockCall): string[] {
  const frames: string[] = [];
  let sequenceNumber = 0;
  const emit: Emit = (type, fields) => {
    frames.push(sseEvent(type, { type, sequence_number: sequenceNumber, ...fields }));
    sequenceNumber += 1;
  };
  const envelope = { id: mockIds.response(), createdAt: unixSeconds() };
  const inProgress = responseObject(envelope, call, { status: "in_progress", output: [], usage: null });
  emit("response.created", { response: inProgress });
  emit("response.in_progress", { response: inProgress });

  const items = responsesItems(scenario);
  items.forEach((item, index) => emitItem(emit, item, index));

  const status = responseStatus(scenario);
  const final = responseObject(envelope, call, {
    ...status,
    output: items.map(completedItem),
    usage: responsesUsage(scenario.usage),
  });
  emit(status.status === "incomplete" ? "response.incomplete" : "response.completed", { response: final });
  return frames;
}
