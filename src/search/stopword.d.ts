/** The part of `stopword` (https://github.com/fergiemcdowall/stopword, no bundled types) that recall uses. */
declare module 'stopword' {
  /** Stop words of a language, by ISO 639-3 code. */
  export const por: readonly string[];
  export const spa: readonly string[];
  export const fra: readonly string[];
  export const deu: readonly string[];
}
