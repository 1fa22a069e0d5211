/** A lossy translation never drops silently: it reports what it could not carry. */
export interface IrWarning {
  /** e.g. "unsupported_field", "dropped_content", "unsupported_tool" */
  code: string;
  /** The field or item concerned, e.g. "top_k", "messages[2].content[1]". */
  field?: string;
  message: string;
}
