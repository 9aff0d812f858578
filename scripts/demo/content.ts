/**
 * What the demo's three channels talk about, in their own language and in the language their
 * translated subtitles are in: title patterns, subjects, and sentences with a slot for the subject.
 * Written for the demo (no real channel's words): enough variety that search, summaries and tags
 * have something to find, and the same sentences in two languages for the translated tracks.
 */

/** A text in the channel's language and in its translation language, `{s}` standing for the subject. */
type Pair = readonly [original: string, translation: string];

export interface ChannelTheme {
  /** The channel's id suffix seed, title, handle and the languages of its talk and of its translations. */
  key: string;
  title: string;
  handle: string;
  description: string;
  language: string;
  translationLanguage: string;
  country: string;
  category: string;
  /** How its uploader's yt-dlp wrote subtitles: the original track's format and kind, the translation's format. */
  originalTrack: { format: 'vtt' | 'srt' | 'json3'; kind: 'manual' | 'auto' };
  translationFormat: 'vtt' | 'srt';
  subjects: readonly Pair[];
  titles: readonly Pair[];
  sentences: readonly Pair[];
  tags: readonly string[];
}

export const THEMES: readonly ChannelTheme[] = [
  {
    key: 'harbour-lathe-works',
    title: 'Harbour Lathe Works',
    handle: '@harbourlatheworks',
    description:
      'Old machine tools brought back to work in a small harbour-side shop: lathes, shapers, mills and the tooling that goes with them.',
    language: 'en',
    translationLanguage: 'de',
    country: 'GB',
    category: 'Howto & Style',
    originalTrack: { format: 'vtt', kind: 'manual' },
    translationFormat: 'vtt',
    subjects: [
      ['Myford ML7 lathe', 'Myford-ML7-Drehbank'],
      ['South Bend 9 lathe', 'South-Bend-9-Drehbank'],
      ['Alba shaper', 'Alba-Shapingmaschine'],
      ['bench grinder', 'Doppelschleifer'],
      ['tailstock', 'Reitstock'],
      ['quick-change gearbox', 'Schnellwechselgetriebe'],
      ['four-jaw chuck', 'Vierbackenfutter'],
      ['milling vise', 'Maschinenschraubstock'],
      ['drill press', 'Säulenbohrmaschine'],
      ['cross slide', 'Querschlitten'],
      ['steady rest', 'Setzstock'],
      ['dividing head', 'Teilkopf'],
    ],
    titles: [
      ['Restoring the {s}', 'Restaurierung: {s}'],
      ['Scraping the ways of the {s}', 'Die Führungen des {s} schaben'],
      ['Rebuilding a worn {s}', 'Einen verschlissenen {s} überholen'],
      ['Can this {s} be saved?', 'Ist dieser {s} noch zu retten?'],
      ['Making new parts for the {s}', 'Neue Teile für den {s}'],
      ['Aligning the {s} with an indicator', 'Den {s} mit der Messuhr ausrichten'],
      ['First cuts on the restored {s}', 'Erste Späne auf dem restaurierten {s}'],
      ['Painting and reassembling the {s}', 'Lackieren und Zusammenbauen: {s}'],
      ['Stripping down the {s}', 'Den {s} zerlegen'],
      ['What I paid for this {s}', 'Was dieser {s} gekostet hat'],
    ],
    sentences: [
      [
        'Today we are taking apart the {s} that came in from the auction last week.',
        'Heute zerlegen wir den {s}, der letzte Woche von der Auktion kam.',
      ],
      [
        'The {s} has decades of grime on it, so the first job is a proper clean with paraffin.',
        'Auf dem {s} liegt jahrzehntealter Schmutz, also wird er zuerst gründlich mit Petroleum gereinigt.',
      ],
      [
        'Under the old paint the castings are in surprisingly good shape.',
        'Unter der alten Farbe sind die Gussteile in erstaunlich gutem Zustand.',
      ],
      [
        'Wear on the ways is about three thousandths of an inch near the chuck.',
        'Der Verschleiß der Führungen beträgt nahe am Futter etwa acht Hundertstel Millimeter.',
      ],
      [
        'I measure every surface with a dial indicator before deciding what to scrape.',
        'Vor dem Schaben messe ich jede Fläche mit der Messuhr.',
      ],
      [
        'Scraping takes patience: mark with blue, scrape the high spots, and repeat.',
        'Schaben braucht Geduld: mit Tuschierfarbe markieren, die hohen Stellen schaben, wiederholen.',
      ],
      [
        'The bronze bushings were worn oval, so I turned new ones from a bar of phosphor bronze.',
        'Die Bronzebuchsen waren oval verschlissen, also habe ich neue aus Phosphorbronze gedreht.',
      ],
      [
        'A new leadscrew nut removes most of the backlash in the {s}.',
        'Eine neue Leitspindelmutter beseitigt fast das ganze Spiel im {s}.',
      ],
      [
        'Oil every sliding surface before reassembly, and never run the {s} dry.',
        'Vor dem Zusammenbau jede Gleitfläche ölen und den {s} nie trocken laufen lassen.',
      ],
      [
        'The test cut shows the {s} now turns parallel within a tenth over six inches.',
        'Der Probeschnitt zeigt, dass der {s} jetzt auf 150 Millimeter auf drei Mikrometer zylindrisch dreht.',
      ],
      [
        'Safety first: glasses on, sleeves rolled up, and no gloves near a rotating chuck.',
        'Sicherheit zuerst: Schutzbrille auf, Ärmel hoch und keine Handschuhe an einem drehenden Futter.',
      ],
      [
        'In the next episode we will fit the motor and the new drive belt.',
        'In der nächsten Folge bauen wir den Motor und den neuen Antriebsriemen ein.',
      ],
      [
        'Thanks to everyone who sent drawings of the original parts for the {s}.',
        'Danke an alle, die Zeichnungen der Originalteile für den {s} geschickt haben.',
      ],
      [
        'A worn gib strip can be shimmed, but a new one fits better and lasts longer.',
        'Eine verschlissene Keilleiste kann man unterlegen, aber eine neue passt besser und hält länger.',
      ],
    ],
    tags: ['lathe', 'restoration', 'machining', 'scraping', 'workshop', 'metalworking'],
  },
  {
    key: 'cocina-abuela-rosa',
    title: 'Cocina de la Abuela Rosa',
    handle: '@cocinaabuelarosa',
    description: 'Recetas de casa, como las hacía la abuela Rosa en Valencia: arroces, guisos, dulces y el pan de cada semana.',
    language: 'es',
    translationLanguage: 'en',
    country: 'ES',
    category: 'Food',
    originalTrack: { format: 'json3', kind: 'auto' },
    translationFormat: 'srt',
    subjects: [
      ['paella valenciana', 'Valencian paella'],
      ['tortilla de patatas', 'Spanish omelette'],
      ['gazpacho andaluz', 'Andalusian gazpacho'],
      ['croquetas de jamón', 'ham croquettes'],
      ['cocido madrileño', 'Madrid stew'],
      ['arroz con leche', 'rice pudding'],
      ['pan de pueblo', 'country bread'],
      ['lentejas con chorizo', 'lentils with chorizo'],
      ['churros caseros', 'homemade churros'],
      ['fideuà', 'fideuà'],
      ['flan de huevo', 'egg custard'],
      ['albóndigas en salsa', 'meatballs in sauce'],
    ],
    titles: [
      ['Cómo hacer {s} como la abuela', 'How to make {s} like grandma'],
      ['{s}: la receta de siempre', '{s}: the classic recipe'],
      ['El secreto de la {s} perfecta', 'The secret of the perfect {s}'],
      ['{s} en 30 minutos', '{s} in 30 minutes'],
      ['Errores al preparar {s}', 'Mistakes when making {s}'],
      ['{s} para toda la familia', '{s} for the whole family'],
      ['Mi {s} de los domingos', 'My Sunday {s}'],
      ['{s} sin horno', '{s} without an oven'],
      ['La {s} de mi pueblo', 'The {s} from my village'],
      ['{s} paso a paso', '{s} step by step'],
    ],
    sentences: [
      ['Hoy os enseño a preparar {s} como la hacía mi madre.', 'Today I will show you how to make {s} the way my mother made it.'],
      [
        'Lo primero es tener todos los ingredientes preparados encima de la mesa.',
        'The first thing is to have all the ingredients ready on the table.',
      ],
      [
        'Usamos un buen aceite de oliva virgen extra, que se nota en el sabor.',
        'We use a good extra virgin olive oil, you can taste the difference.',
      ],
      [
        'El fuego tiene que estar medio, sin prisas, para que no se queme.',
        'The heat has to be medium, without hurrying, so that nothing burns.',
      ],
      ['Añadimos la sal poco a poco y vamos probando.', 'We add the salt little by little and keep tasting.'],
      ['Para la {s} el tiempo de reposo es muy importante.', 'For the {s} the resting time is very important.'],
      [
        'Si no tenéis azafrán, un poco de pimentón también queda muy bien.',
        'If you have no saffron, a little paprika works very well too.',
      ],
      ['Removemos con cuchara de madera para no romper nada.', 'We stir with a wooden spoon so as not to break anything.'],
      [
        'Mi abuela decía que la {s} se hace con cariño y sin mirar el reloj.',
        'My grandmother used to say that {s} is made with love and without looking at the clock.',
      ],
      ['Dejamos que se enfríe unos diez minutos antes de servir.', 'We let it cool for about ten minutes before serving.'],
      ['Con estas cantidades comen cuatro personas sin problema.', 'With these amounts four people eat without any problem.'],
      ['Contadme en los comentarios cómo la hacéis en vuestra casa.', 'Tell me in the comments how you make it at home.'],
      ['La próxima semana haremos un postre muy fácil con lo que sobre.', 'Next week we will make a very easy dessert with the leftovers.'],
      ['El truco está en no abrir la tapa mientras se cocina.', 'The trick is not to lift the lid while it cooks.'],
    ],
    tags: ['receta', 'cocina española', 'recetas fáciles', 'comida casera', 'abuela'],
  },
  {
    key: 'nordlicht-sternwarte',
    title: 'Nordlicht Sternwarte',
    handle: '@nordlichtsternwarte',
    description: 'Astronomie vom Deich: Beobachtungen, Teleskope, Astrofotografie und der Himmel über Nordfriesland.',
    language: 'de',
    translationLanguage: 'en',
    country: 'DE',
    category: 'Science & Technology',
    originalTrack: { format: 'vtt', kind: 'manual' },
    translationFormat: 'srt',
    subjects: [
      ['Andromedagalaxie', 'Andromeda Galaxy'],
      ['Saturn', 'Saturn'],
      ['Orionnebel', 'Orion Nebula'],
      ['Polarlicht', 'aurora'],
      ['Mondfinsternis', 'lunar eclipse'],
      ['Jupiter', 'Jupiter'],
      ['Perseiden', 'Perseids'],
      ['Plejaden', 'Pleiades'],
      ['Sonnenflecken', 'sunspots'],
      ['Milchstraße', 'Milky Way'],
      ['Kometen', 'comet'],
      ['Venus', 'Venus'],
    ],
    titles: [
      ['{s} mit dem Dobson beobachtet', 'Observing {s} with a Dobsonian'],
      ['So fotografiert ihr {s}', 'How to photograph {s}'],
      ['{s}: was man wirklich sieht', '{s}: what you really see'],
      ['{s} heute Nacht am Deich', '{s} tonight at the dyke'],
      ['Anfängerfehler bei {s}', 'Beginner mistakes with {s}'],
      ['{s} im Zeitraffer', '{s} in time-lapse'],
      ['Das Teleskop für {s}', 'The telescope for {s}'],
      ['{s} erklärt in zehn Minuten', '{s} explained in ten minutes'],
      ['Live vom Deich: {s}', 'Live from the dyke: {s}'],
      ['{s} mit dem Fernglas', '{s} with binoculars'],
    ],
    sentences: [
      [
        'Heute Nacht ist der Himmel über dem Deich endlich klar, also schauen wir uns {s} an.',
        'Tonight the sky over the dyke is finally clear, so we take a look at {s}.',
      ],
      [
        'Das Teleskop braucht etwa eine halbe Stunde, um sich an die Außentemperatur anzupassen.',
        'The telescope needs about half an hour to adjust to the outside temperature.',
      ],
      ['Mit dem Rotlicht bleiben die Augen an die Dunkelheit gewöhnt.', 'With red light your eyes stay adapted to the dark.'],
      [
        'Für {s} reicht schon ein einfaches Fernglas mit sieben facher Vergrößerung.',
        'For {s} a simple pair of seven power binoculars is already enough.',
      ],
      [
        'Die Belichtungszeit lag bei dreißig Sekunden mit einer Empfindlichkeit von ISO achthundert.',
        'The exposure time was thirty seconds at a sensitivity of ISO eight hundred.',
      ],
      [
        'Wichtig ist eine stabile Montierung, sonst verwackelt jedes Bild.',
        'A stable mount is important, otherwise every image is blurred.',
      ],
      [
        'Die Lichtverschmutzung aus der Stadt sieht man am Horizont als orangen Schimmer.',
        'The light pollution from the town shows as an orange glow on the horizon.',
      ],
      ['Am besten beobachtet man {s} in den Stunden nach Mitternacht.', 'It is best to observe {s} in the hours after midnight.'],
      ['Ich habe zwanzig Aufnahmen gestapelt, um das Rauschen zu verringern.', 'I stacked twenty exposures to reduce the noise.'],
      ['Schreibt mir gern, was ihr selbst am Himmel gesehen habt.', 'Feel free to write to me about what you saw in the sky yourselves.'],
      [
        'Der Wind am Deich ist die größte Herausforderung für lange Belichtungen.',
        'The wind at the dyke is the biggest challenge for long exposures.',
      ],
      [
        'Nächste Woche zeige ich euch, wie man das Teleskop richtig einnordet.',
        'Next week I will show you how to align the telescope to the north properly.',
      ],
      ['Eine Sternkarte oder eine App hilft, {s} schnell zu finden.', 'A star chart or an app helps to find {s} quickly.'],
      [
        'Die Luft war heute sehr ruhig, deshalb sind die Details so scharf.',
        'The air was very steady today, which is why the details are so sharp.',
      ],
    ],
    tags: ['Astronomie', 'Teleskop', 'Astrofotografie', 'Sternenhimmel', 'Nordfriesland'],
  },
];
