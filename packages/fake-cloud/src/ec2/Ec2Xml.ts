/** EC2 Query protocol output: XML with the element names real EC2 uses. */
import { randomUUID } from "node:crypto"

export const EC2_XMLNS = "http://ec2.amazonaws.com/doc/2016-11-15/"

export const escapeXml = (s: string): string =>
  s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")

/** `<name>text</name>`, or `<name/>` for an empty value. */
export const el = (name: string, value: string | number | boolean | undefined): string =>
  value === undefined || value === "" ? `<${name}/>` : `<${name}>${escapeXml(String(value))}</${name}>`

/** `<name><item>..</item>...</name>` (EC2 wraps every list member in `<item>`). */
export const set = (name: string, items: ReadonlyArray<string>): string =>
  items.length === 0 ? `<${name}/>` : `<${name}>${items.map((i) => `<item>${i}</item>`).join("")}</${name}>`

export const newRequestId = (): string => randomUUID()

export function ec2Response(action: string, requestId: string, inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${EC2_XMLNS}">${el("requestId", requestId)}${inner}</${action}Response>`
}

export function ec2ErrorResponse(code: string, message: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error>${el("Code", code)}${el("Message", message)}</Error></Errors>${el("RequestID", requestId)}</Response>`
}
