// Message and document types of each transcript format (F-1, J-3): what
// `ContextCompactor<F>` takes and gives back. They name the fields the engine reads and
// writes; every other field a provider defines rides through untouched, so each shape
// stays open (`[key: string]: unknown`).

/** Provenance keys of the stored view (T-1, F-4): on a stored row, never in a request. */
export interface Provenance {
  /** 1 = a compaction summary, 2 = a rollup of summaries (Y-3). */
  summary_level?: 1 | 2
  /** The artifact handle of an evicted tool result (`artifact#<tag>-N`, or `artifact#N` from older states; E-1). */
  artifact_ref?: string
  /** What the row is to the engine. */
  transcript_role?: 'conversational' | 'compaction_summary' | 'injected_context' | 'findings' | (string & {})
  /** The row's stable id (T-4). */
  message_id?: string
  /** Where an observation came from (S-6). */
  observation_source?: string
  /** Never folded (C-8). */
  pinned?: boolean
}

/** A content part of a format the engine does not look into. */
export interface OpaquePart { type: string; [key: string]: unknown }

// ---- OpenAI Chat Completions -----------------------------------------------------------
export interface OpenAIChatToolCall {
  id: string
  type: 'function' | (string & {})
  function: { name: string; arguments: string }
  [key: string]: unknown
}
export interface OpenAIChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool'
  content?: string | null | Array<{ type: 'text'; text: string; [key: string]: unknown } | OpaquePart>
  name?: string
  tool_calls?: OpenAIChatToolCall[]
  tool_call_id?: string
  [key: string]: unknown
}
export type OpenAIChatDocument = OpenAIChatMessage[] | { messages: OpenAIChatMessage[]; [key: string]: unknown }

// ---- Anthropic Messages ----------------------------------------------------------------
export type AnthropicBlock =
  | { type: 'text'; text: string; [key: string]: unknown }
  | { type: 'tool_use'; id: string; name: string; input: unknown; [key: string]: unknown }
  | { type: 'tool_result'; tool_use_id: string; content?: string | AnthropicBlock[]; is_error?: boolean; [key: string]: unknown }
  | { type: 'thinking' | 'redacted_thinking' | 'image' | 'document' | (string & {}); [key: string]: unknown }
export interface AnthropicMessage {
  role: 'user' | 'assistant'
  content: string | AnthropicBlock[]
  [key: string]: unknown
}
export type AnthropicDocument = AnthropicMessage[] | { system?: string | AnthropicBlock[]; messages: AnthropicMessage[]; [key: string]: unknown }

// ---- Gemini generateContent ------------------------------------------------------------
export interface GeminiPart {
  text?: string
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string }
  functionResponse?: { name: string; response?: Record<string, unknown>; id?: string }
  inlineData?: { mimeType: string; data: string }
  thought?: boolean
  [key: string]: unknown
}
export interface GeminiContent {
  role?: 'user' | 'model' | 'function'
  parts: GeminiPart[]
  [key: string]: unknown
}
export type GeminiDocument = GeminiContent[] | { systemInstruction?: unknown; contents: GeminiContent[]; [key: string]: unknown }

// ---- OpenAI Responses ------------------------------------------------------------------
export type OpenAIResponsesItem =
  | { type?: 'message'; role: 'system' | 'developer' | 'user' | 'assistant'; content: string | OpaquePart[]; [key: string]: unknown }
  | { type: 'function_call'; call_id: string; name: string; arguments: string; [key: string]: unknown }
  | { type: 'function_call_output'; call_id: string; output: unknown; [key: string]: unknown }
  | { type: 'reasoning' | 'compaction' | 'custom_tool_call' | 'custom_tool_call_output' | (string & {}); [key: string]: unknown }
export type OpenAIResponsesDocument = OpenAIResponsesItem[] | { instructions?: string; input: OpenAIResponsesItem[]; [key: string]: unknown }

// ---- Vercel AI SDK ModelMessage --------------------------------------------------------
export type AiSdkPart =
  | { type: 'text'; text: string; [key: string]: unknown }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown; [key: string]: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown; [key: string]: unknown }
  | { type: 'reasoning' | 'file' | 'image' | 'tool-approval-request' | 'tool-approval-response' | (string & {}); [key: string]: unknown }
export interface AiSdkMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | AiSdkPart[]
  providerOptions?: Record<string, unknown>
  [key: string]: unknown
}
export type AiSdkDocument = AiSdkMessage[] | { system?: string; messages: AiSdkMessage[]; [key: string]: unknown }

// ---- The engine's canonical JSON -------------------------------------------------------
export interface CanonicalMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  blocks?: Array<{ type: 'text' | 'media' | 'tool_call' | 'tool_result' | 'reasoning' | 'opaque' | (string & {}); [key: string]: unknown }>
  [key: string]: unknown
}
export type CanonicalDocument = CanonicalMessage[] | { messages: CanonicalMessage[]; [key: string]: unknown }

/** Message (row) type of each format. */
export interface MessageTypes {
  'openai-chat': OpenAIChatMessage
  anthropic: AnthropicMessage
  gemini: GeminiContent
  'openai-responses': OpenAIResponsesItem
  'ai-sdk': AiSdkMessage
  canonical: CanonicalMessage
}
/** Document type of each format (a bare list, or the format's request object). */
export interface DocumentTypes {
  'openai-chat': OpenAIChatDocument
  anthropic: AnthropicDocument
  gemini: GeminiDocument
  'openai-responses': OpenAIResponsesDocument
  'ai-sdk': AiSdkDocument
  canonical: CanonicalDocument
}
type Format = keyof DocumentTypes
/** The message type of format `F` (`auto`: any format's). */
export type MessageOf<F extends Format | 'auto'> = F extends Format ? MessageTypes[F] : MessageTypes[Format]
/** The request-view document of format `F` (`auto`: any format's). */
export type DocumentOf<F extends Format | 'auto'> = F extends Format ? DocumentTypes[F] : DocumentTypes[Format]
/** A stored-view row: the format's message plus the provenance keys. */
export type StoredMessageOf<F extends Format | 'auto'> = MessageOf<F> & Provenance
/** The stored-view document of format `F`: rows may carry provenance keys. */
export type StoredDocumentOf<F extends Format | 'auto'> = DocumentOf<F>
