import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ChatOpenAI } from "@langchain/openai";

// Answers questions about the product documentation. DOCS_INDEX names the documentation set the
// answers must come from; the model key (OPENAI_API_KEY) comes from the deployment's secrets.

const model = new ChatOpenAI({ model: "gpt-4o-mini", temperature: 0 });
const index = process.env.DOCS_INDEX ?? "docs-latest";

async function answer(state: typeof MessagesAnnotation.State) {
  const system = {
    role: "system",
    content: `You answer questions about our product using the documentation set ${index}. Say so when the documentation does not cover a question.`,
  };
  const reply = await model.invoke([system, ...state.messages]);
  return { messages: [reply] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("answer", answer)
  .addEdge("__start__", "answer")
  .addEdge("answer", "__end__")
  .compile();
