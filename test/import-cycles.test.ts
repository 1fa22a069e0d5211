import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { sourceFiles } from "./support/source-files";

/**
 * The source tree's layering (README "Layout"): no import cycle between files, and none
 * between folders, where a file directly under src/ counts as a folder of its own. Type-only
 * imports count too: a cycle of types is still two folders that cannot be read apart.
 */
const SRC = resolve(import.meta.dir, "../src");
const IMPORT = /(?:import|export)\s+(?:type\s+)?(?:[^'"]*?\s+from\s+)?["'](\.[^"']+)["']/g;

function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const targets = new Set<string>();
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const base = resolve(dirname(file), match[1]!);
      const target = [`${base}.ts`, join(base, "index.ts"), base].find((candidate) => candidate.endsWith(".ts") && existsSync(candidate));
      if (target) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one member (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

function folderOf(file: string): string {
  const path = relative(SRC, file);
  const top = path.split("/")[0]!;
  return top === path ? path : top;
}

describe("imports", () => {
  const files = importGraph();

  test("no cycle between files", () => {
    expect(cycles(files).map((component) => component.map((file) => relative(SRC, file)))).toEqual([]);
  });

  test("no cycle between folders", () => {
    const folders = new Map<string, Set<string>>();
    for (const [file, targets] of files) {
      const from = folderOf(file);
      const edges = folders.get(from) ?? new Set<string>();
      for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target));
      folders.set(from, edges);
    }
    expect(cycles(folders)).toEqual([]);
  });
});
