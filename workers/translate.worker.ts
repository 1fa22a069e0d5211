// Entry point of a translation worker: protocol translation and usage-frame
// accounting, strings in and out. All logic lives in src/translation.
import { serveWorker } from "../src/workers/serve-worker";
import { handleTranslationMessage } from "../src/translation/translation-handler";

serveWorker(handleTranslationMessage);
