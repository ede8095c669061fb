// tsc --strict over the README's LangChain lines (I-2).
import { createAgent } from 'langchain'
import type { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { HumanMessage, type BaseMessage } from '@langchain/core/messages'
import { compactionMiddleware, fromLangChainMessages, toLangChainMessages } from 'context-compactor/langchain'
import { ContextCompactor } from 'context-compactor'

export async function run(model: BaseChatModel, history: BaseMessage[]) {
  const agent = createAgent({ model, tools: [], middleware: [compactionMiddleware({ contextWindow: 128_000 })] })
  await agent.invoke({ messages: [new HumanMessage('hi')] })
  const rows = fromLangChainMessages(history)
  const c = new ContextCompactor({ format: 'openai-chat' })
  const out = await c.compact(null, rows)
  const back: BaseMessage[] = toLangChainMessages(Array.isArray(out.transcript) ? out.transcript : out.transcript.messages)
  // @ts-expect-error rows are not LangChain messages
  fromLangChainMessages(rows)
  return back.length
}
