/** The package's one export (it ships no types): each property's value aliases, mapped to their canonical names. */
declare module 'unicode-property-value-aliases-ecmascript' {
  const aliases: Map<string, Map<string, string>>;
  export default aliases;
}
