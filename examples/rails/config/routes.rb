Rails.application.routes.draw do
  # The index page (50 partials and a collection of 50), an article as JSON, a form
  # and its CSRF-protected POST, and an action that raises.
  resources :articles, only: %i[index show new create]
  get "boom" => "articles#boom"
  root "articles#index"

  # Reveal health status on /up that returns 200 if the app boots with no exceptions, otherwise 500.
  get "up" => "rails/health#show", as: :rails_health_check
end
