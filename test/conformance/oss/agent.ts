// The conformance graph for the open-source agent server: the same behaviour as plumb's simulated
// graph (src/control-plane/agent-server/graph.ts) — "ping" gets "pong", other text is echoed,
// "raise error" fails — answered after CONFORMANCE_RUN_MS through a fake chat model, so the
// answer streams in chunks as a real model's would. "approve?" goes to the `review` node, which
// calls interrupt() and, once resumed with a value, answers "approved: <value>".
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const runMs = Number(process.env.CONFORMANCE_RUN_MS ?? 1500);

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((block: { text?: unknown }) => (typeof block?.text === "string" ? block.text : ""))
          .join("")
      : "";

async function agent(state: typeof MessagesAnnotation.State, config: RunnableConfig) {
  const last: BaseMessage | undefined = state.messages.at(-1);
  if (last === undefined || last.getType() !== "human") return { messages: [] };
  const text = textOf(last.content);
  const command = text.trim().toLowerCase();
  // Not tied to the run's signal: the server stops a cancelled run itself, as with a real model.
  await new Promise((resolve) => setTimeout(resolve, runMs));
  if (command === "raise error") {
    const error = new Error("the graph raised on request");
    error.name = "GraphError";
    throw error;
  }
  const model = new FakeListChatModel({ responses: [command === "ping" ? "pong" : text], sleep: 1 });
  return { messages: [await model.invoke(state.messages, config)] };
}

async function review() {
  await new Promise((resolve) => setTimeout(resolve, runMs));
  const answer: unknown = interrupt({ question: "Approve this request?" });
  return {
    messages: [new AIMessage(`approved: ${typeof answer === "string" ? answer : JSON.stringify(answer)}`)],
  };
}

const firstNode = (state: typeof MessagesAnnotation.State) => {
  const last = state.messages.at(-1);
  const marker = last?.getType() === "human" && textOf(last.content).trim().toLowerCase() === "approve?";
  return marker ? "review" : "agent";
};

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("review", review)
  .addConditionalEdges(START, firstNode, ["agent", "review"])
  .addEdge("agent", END)
  .addEdge("review", END)
  .compile();
