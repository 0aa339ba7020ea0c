// "order 1234567890", "reference number is 415 555 0132": numbers named as something else are not phone numbers
// or SSNs. Card numbers are redacted whatever they are called (PCI DSS leaves no room).
const REFERENCE = new RegExp(
  '\\b(order|reference|ref|confirmation|tracking|invoice|account|policy|case|ticket|booking|member|customer|serial|model|claim|transaction|receipt|item|sku|zip|postcode|postal)\\b' +
    "[^a-z0-9]*(?:(?:number|no|num|code|id|is|was|it's|its)\\b[^a-z0-9]*)*$",
)

/** True when the text before a number (lower case) names it as an order, reference, account... number. */
export function namedAsReference(context: string): boolean {
  return REFERENCE.test(context)
}
